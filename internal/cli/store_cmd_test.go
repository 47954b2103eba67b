package cli_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

type migrateJSON struct {
	Source        string `json:"source"`
	Target        string `json:"target"`
	SchemaVersion int    `json:"schema_version"`
	Tables        []struct {
		Table string `json:"table"`
		Rows  int64  `json:"rows"`
	} `json:"tables"`
	TotalRows      int64  `json:"total_rows"`
	Verified       bool   `json:"verified"`
	ConfigPath     string `json:"config_path"`
	HomeUsesTarget bool   `json:"home_uses_target"`
}

// rowCount counts the rows of table in the database driver and dsn name.
func rowCount(t *testing.T, driver, dsn, table string) int64 {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// A home that ran turns and a task moves to PostgreSQL: every table's
// count equal, and the home pointed at the copy goes on where it stopped.
func TestStoreMigrate(t *testing.T) {
	target := demiurgetest.PostgresDatabase(t)
	h := newHome(t)
	var first struct {
		SessionID string `json:"session_id"`
	}
	h.decode(0, &first, "run", "--json", "hello")
	h.ok("run", "and again")
	h.writeSchedule("daily", "schedule: \"0 9 * * *\"\nprompt: \"daily check-in\"\n")
	h.ok("schedules", "run", "daily")
	var before []taskJSON
	h.decode(0, &before, "tasks", "list", "--all", "--json")

	var rep migrateJSON
	h.decode(0, &rep, "store", "migrate", "--to", target, "--json")
	sqlitePath := filepath.Join(h.dir, "runtime", "runtime.sqlite3")
	if rep.Source != sqlitePath || rep.Target != store.DescribeURL(target) || !rep.Verified || rep.HomeUsesTarget ||
		rep.SchemaVersion != store.SchemaVersion() || rep.ConfigPath != filepath.Join(h.dir, "config.yaml") || len(rep.Tables) < 20 {
		t.Fatalf("store migrate --json = %+v", rep)
	}
	var sum int64
	for _, c := range rep.Tables {
		lite, pg := rowCount(t, "sqlite", sqlitePath, c.Table), rowCount(t, "pgx", target, c.Table)
		if c.Rows != lite || pg != lite {
			t.Errorf("table %s: reported %d, SQLite %d, PostgreSQL %d", c.Table, c.Rows, lite, pg)
		}
		sum += c.Rows
	}
	// Two runs and a schedule's: three turns; the schedule's one task.
	turns, sessions := rowCount(t, "pgx", target, "turns"), rowCount(t, "pgx", target, "sessions")
	if sum != rep.TotalRows || turns != 3 || rowCount(t, "pgx", target, "tasks") != 1 {
		t.Fatalf("total %d, sum %d, turns %d", rep.TotalRows, sum, turns)
	}

	// Into a ledger with rows: refused, one line, nothing changed.
	events := rowCount(t, "pgx", target, "runtime_events")
	r := h.run("", "store", "migrate", "--to", target)
	wantOneLine(t, r, 2, store.DescribeURL(target)+" is not empty")
	if n := rowCount(t, "pgx", target, "runtime_events"); n != events {
		t.Fatalf("events after the refusal: %d, want %d", n, events)
	}

	// The home pointed at the copy: the same tasks and sessions, and a
	// turn continues the session (the sequences follow the copied rows).
	t.Setenv(host.DatabaseURLEnv, target)
	var after []taskJSON
	h.decode(0, &after, "tasks", "list", "--all", "--json")
	if len(after) != 1 || len(before) != 1 || after[0].TaskID != before[0].TaskID || after[0].Status != before[0].Status {
		t.Fatalf("tasks on PostgreSQL %+v, on SQLite %+v", after, before)
	}
	var out struct {
		SessionID string `json:"session_id"`
		Outcome   string `json:"outcome"`
		Text      string `json:"text"`
	}
	h.decode(0, &out, "run", "--json", "on postgres")
	if out.Outcome != "completed" || out.Text != "[fake] on postgres" || out.SessionID != first.SessionID {
		t.Fatalf("run on the copy: %+v, want session %s", out, first.SessionID)
	}
	if n := rowCount(t, "pgx", target, "turns"); n != turns+1 {
		t.Fatalf("turns on PostgreSQL after one more run: %d, want %d", n, turns+1)
	}
	if n := rowCount(t, "pgx", target, "sessions"); n != sessions {
		t.Fatalf("the run continued the CLI session: %d sessions, want %d", n, sessions)
	}
	if r := h.ok("doctor"); !strings.Contains(r.stdout, "database: ok (schema version ") || !strings.Contains(r.stdout, ", postgres) "+store.DescribeURL(target)) {
		t.Fatalf("doctor on the copy:\n%s", r.stdout)
	}
}

// What the operator can fix is refused with one line and exit 2, the
// target named by host, port and database, never with its password.
func TestStoreMigrateRefusals(t *testing.T) {
	h := newHome(t)
	h.ok("init")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"refused connection", []string{"--to", "postgres://alice:s3cret@127.0.0.1:1/ledger?connect_timeout=5"}, "runtime database postgres://127.0.0.1:1/ledger is unreachable: "},
		{"port that does not parse", []string{"--to", "postgres://alice:s3cret@127.0.0.1:port/ledger"}, "runtime database URL postgres://127.0.0.1:port/ledger is not valid: "},
		{"not a URL", []string{"--to", "/var/lib/s3cret.sqlite3"}, "must be a postgres:// URL"},
		{"no target", nil, "store migrate needs --to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.run("", append([]string{"store", "migrate"}, c.args...)...)
			wantOneLine(t, r, 2, c.want)
			if strings.Contains(r.stdout+r.stderr, "s3cret") || r.stdout != "" {
				t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
			}
		})
	}

	empty := filepath.Join(t.TempDir(), "nothing-here")
	r := h.run("", "--home", empty, "store", "migrate", "--to", "postgres://127.0.0.1:1/ledger")
	wantOneLine(t, r, 2, "has no SQLite ledger to migrate")
}

// A target of a newer schema is refused as an SQLite file is; so is a
// source a live Host of the home still writes.
func TestStoreMigrateRefusesNewerSchemaAndLiveHost(t *testing.T) {
	ctx := context.Background()
	newer := demiurgetest.PostgresDatabase(t)
	db, err := store.Open(ctx, newer, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("pgx", newer)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE demiurge_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	h := newHome(t)
	h.ok("run", "hello")
	wantOneLine(t, h.run("", "store", "migrate", "--to", newer), 2, "newer than this build supports")
	t.Setenv(host.DatabaseURLEnv, newer)
	wantOneLine(t, h.run("", "tasks", "list"), 2, "newer than this build supports")
	os.Unsetenv(host.DatabaseURLEnv)

	live, err := host.Open(ctx, host.Options{Home: h.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close(ctx)
	target := demiurgetest.PostgresDatabase(t)
	wantOneLine(t, h.run("", "store", "migrate", "--to", target), 2, "is in use by 1 live Host(s)")
	if n := rowCount(t, "pgx", target, "runtime_events"); n != 0 {
		t.Fatalf("%d events copied despite a live Host", n)
	}
}

// Any command on a ledger URL that cannot be reached: one line naming
// host, port and database, exit 2, no password; the doctor reports it as
// a finding.
func TestUnreachableDatabaseURL(t *testing.T) {
	h := newHome(t)
	t.Setenv(host.DatabaseURLEnv, "postgres://alice:s3cret@127.0.0.1:1/ledger?connect_timeout=5")
	for _, args := range [][]string{{"tasks", "list"}, {"run", "hello"}} {
		r := h.run("", args...)
		wantOneLine(t, r, 2, "runtime database postgres://127.0.0.1:1/ledger is unreachable: ")
		if strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Fatalf("%v printed the password: %q %q", args, r.stdout, r.stderr)
		}
	}
	r := h.run("", "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "database: unavailable postgres://127.0.0.1:1/ledger\n") ||
		!strings.Contains(r.stdout, "error database.open_failed: ") || strings.Contains(r.stdout+r.stderr, "s3cret") {
		t.Fatalf("doctor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The doctor lists a live Host of the home with the age of its lease.
func TestDoctorListsLiveHost(t *testing.T) {
	ctx := context.Background()
	h := newHome(t)
	live, err := host.Open(ctx, host.Options{Home: h.dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close(ctx)
	self, _ := os.Hostname()
	r := h.ok("doctor")
	if !strings.Contains(r.stdout, "hosts: 1 live, 0 gone, ") || !strings.Contains(r.stdout, " on "+self+" pid ") ||
		!strings.Contains(r.stdout, ": lease renewed ") || !strings.Contains(r.stdout, "s ago, expires in ") {
		t.Fatalf("doctor:\n%s", r.stdout)
	}
	var rep struct {
		Hosts struct {
			Live []struct {
				HostID           string  `json:"host_id"`
				Hostname         string  `json:"hostname"`
				PID              int     `json:"pid"`
				LeaseAgeSeconds  float64 `json:"lease_age_seconds"`
				ExpiresInSeconds float64 `json:"expires_in_seconds"`
			} `json:"live"`
		} `json:"hosts"`
	}
	h.decode(0, &rep, "doctor", "--json")
	if len(rep.Hosts.Live) != 1 {
		t.Fatalf("doctor --json hosts %+v", rep.Hosts)
	}
	if l := rep.Hosts.Live[0]; l.PID != os.Getpid() || l.Hostname != self || !strings.HasPrefix(l.HostID, "host_") ||
		l.LeaseAgeSeconds < 0 || l.ExpiresInSeconds <= 0 || l.ExpiresInSeconds > store.HostTTL.Seconds() {
		t.Fatalf("live host %+v", l)
	}
}

// tasks list names the Host that ran each task and its machine.
func TestTasksListShowsHost(t *testing.T) {
	h := newHome(t)
	h.writeSchedule("daily", "schedule: \"0 9 * * *\"\nprompt: \"daily check-in\"\n")
	h.ok("schedules", "run", "daily")
	var tasks []struct {
		TaskID   string `json:"task_id"`
		HostID   string `json:"host_id"`
		Hostname string `json:"hostname"`
	}
	h.decode(0, &tasks, "tasks", "list", "--all", "--json")
	self, _ := os.Hostname()
	if len(tasks) != 1 || !strings.HasPrefix(tasks[0].HostID, "host_") || tasks[0].Hostname != self {
		t.Fatalf("tasks list --json = %+v", tasks)
	}
	r := h.ok("tasks", "list", "--all")
	if !strings.Contains(r.stdout, "  HOST  ") || !strings.Contains(r.stdout, "  "+tasks[0].HostID+"@"+self+"  ") {
		t.Fatalf("tasks list:\n%s", r.stdout)
	}
	if r := h.ok("tasks", "status", tasks[0].TaskID); !strings.Contains(r.stdout, tasks[0].HostID+"@"+self) {
		t.Fatalf("tasks status:\n%s", r.stdout)
	}
}
