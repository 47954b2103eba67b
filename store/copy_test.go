package store_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// copySource is an SQLite ledger with events, a session, a stopped Host
// and task logs: rows in tables with a rowid, with an INTEGER PRIMARY KEY
// and (hosts' lease aside) the projections.
func copySource(t *testing.T) *store.DB {
	t.Helper()
	demiurgetest.SQLiteOnly(t, "copies an SQLite ledger into PostgreSQL")
	src := demiurgetest.MustOpenPath(t, filepath.Join(t.TempDir(), "runtime", "runtime.sqlite3"), store.Options{})
	createSession(t, src, "session_a", map[string]any{"owner": operatorOwner()})
	createSession(t, src, "session_b", map[string]any{"owner": operatorOwner()})
	for range 3 {
		mustAppend(t, src, "", ev("test", "x", "test.event", map[string]any{"n": 1}))
	}
	h := startHost(t, src, store.HostInfo{})
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return src
}

// tableCount counts the rows of table through a raw connection.
func tableCount(t *testing.T, where, table string) int64 {
	t.Helper()
	var n int64
	if err := rawDB(t, where).QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCopyLedgerIntoPostgres(t *testing.T) {
	src := copySource(t)
	target := demiurgetest.PostgresDatabase(t)
	dst := demiurgetest.MustOpenPath(t, target, store.Options{})
	ctx := context.Background()

	rep, err := store.CopyLedger(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != src.Path() || rep.Target != dst.Path() || strings.Contains(rep.Target, "@") || rep.SchemaVersion != store.SchemaVersion() {
		t.Fatalf("report %+v", rep)
	}
	var sum int64
	for _, c := range rep.Tables {
		if want := tableCount(t, src.OpenedWith(), c.Table); c.Rows != want || tableCount(t, target, c.Table) != want {
			t.Errorf("table %s: copied %d, want %d", c.Table, c.Rows, want)
		}
		sum += c.Rows
	}
	if sum != rep.Rows || rep.Rows == 0 || len(rep.Tables) < 20 {
		t.Fatalf("report %+v", rep)
	}

	// The events are the same, seq for seq; the next one follows them.
	want, err := src.Events(ctx, demiurge.EventFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.Events(ctx, demiurge.EventFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("events on PostgreSQL:\n got %+v\nwant %+v", got, want)
	}
	next := mustAppend(t, dst, "", ev("test", "x", "test.event", nil))
	if next[0].Seq != want[len(want)-1].Seq+1 {
		t.Fatalf("next seq %d after %d", next[0].Seq, want[len(want)-1].Seq)
	}
	sessions, err := dst.ListSessions(ctx, demiurge.SessionFilter{})
	if err != nil || len(sessions) != 2 || sessions[0].ID != "session_b" {
		t.Fatalf("sessions on PostgreSQL, newest first: %+v, %v", sessions, err)
	}

	// A ledger with rows is never a target: nothing changes.
	before := tableCount(t, target, "runtime_events")
	_, err = store.CopyLedger(ctx, src, dst)
	wantCode(t, err, demiurge.ECONFIG)
	if msg := err.Error(); !strings.Contains(msg, dst.Path()+" is not empty") || strings.Contains(msg, "\n") {
		t.Fatalf("refusal: %v", err)
	}
	if n := tableCount(t, target, "runtime_events"); n != before {
		t.Fatalf("events after the refusal: %d, want %d", n, before)
	}
}

// While a Host of the source lives, nothing is copied.
func TestCopyLedgerRefusesLiveHost(t *testing.T) {
	src := copySource(t)
	target := demiurgetest.PostgresDatabase(t)
	dst := demiurgetest.MustOpenPath(t, target, store.Options{})
	h := startHost(t, src, store.HostInfo{Hostname: "box-1"})
	_, err := store.CopyLedger(context.Background(), src, dst)
	wantCode(t, err, demiurge.ECONFLICT)
	if !strings.Contains(err.Error(), h.ID()+" on box-1") {
		t.Fatalf("refusal names the Host: %v", err)
	}
	if n := tableCount(t, target, "runtime_events"); n != 0 {
		t.Fatalf("%d events copied despite a live Host", n)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CopyLedger(context.Background(), src, dst); err != nil {
		t.Fatalf("after the Host stopped: %v", err)
	}
}

// A copy that fails part way commits nothing: tables copied before the
// failure are empty again.
func TestCopyLedgerIsAllOrNothing(t *testing.T) {
	src := copySource(t)
	target := demiurgetest.PostgresDatabase(t)
	dst := demiurgetest.MustOpenPath(t, target, store.Options{})
	// sessions is copied after runtime_events (the tables go by name).
	if _, err := rawDB(t, target).Exec(`ALTER TABLE sessions ADD CONSTRAINT refuse_rows CHECK (false)`); err != nil {
		t.Fatal(err)
	}
	_, err := store.CopyLedger(context.Background(), src, dst)
	wantCode(t, err, demiurge.EINTERNAL)
	if !strings.Contains(err.Error(), "copy table sessions into "+dst.Path()) {
		t.Fatalf("failure: %v", err)
	}
	for _, table := range []string{"runtime_events", "hosts", "sessions"} {
		if n := tableCount(t, target, table); n != 0 {
			t.Fatalf("table %s has %d rows after a failed copy", table, n)
		}
	}
}

// Only SQLite is copied, only into PostgreSQL.
func TestCopyLedgerEngines(t *testing.T) {
	src := copySource(t)
	other := demiurgetest.MustOpenPath(t, filepath.Join(t.TempDir(), "other.sqlite3"), store.Options{})
	_, err := store.CopyLedger(context.Background(), src, other)
	wantCode(t, err, demiurge.EINVALID)
}
