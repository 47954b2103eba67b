package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of rawDB

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// rawDB opens the database at where (a file path or a postgres:// URL,
// as store.DB.OpenedWith reports it) with the driver directly, bypassing
// every store check. Its statements are written for SQLite ('?'
// placeholders) and rewritten for PostgreSQL as the store's are.
func rawDB(tb testing.TB, where string) rawConn {
	tb.Helper()
	driver, dsn, pg := "sqlite", where+"?_pragma=busy_timeout(5000)", store.IsDatabaseURL(where)
	if pg {
		driver, dsn = "pgx", where
	}
	r, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return rawConn{r, pg}
}

// rawConn is a connection pool of rawDB.
type rawConn struct {
	*sql.DB
	pg bool
}

func (r rawConn) sql(q string) string {
	if r.pg {
		return store.PostgresSQL(q)
	}
	return q
}

func (r rawConn) Exec(q string, args ...any) (sql.Result, error) { return r.DB.Exec(r.sql(q), args...) }
func (r rawConn) QueryRow(q string, args ...any) *sql.Row        { return r.DB.QueryRow(r.sql(q), args...) }
func (r rawConn) Query(q string, args ...any) (*sql.Rows, error) {
	return r.DB.Query(r.sql(q), args...)
}

func TestOpenFileModes(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "modes of the database, -wal and -shm files")
	dir := filepath.Join(t.TempDir(), "home", "runtime")
	path := filepath.Join(dir, "runtime.sqlite3")
	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))

	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Mode().Perm(), os.FileMode(0o700); got != want {
		t.Fatalf("runtime dir mode = %v, want %v", got, want)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		st, err := os.Stat(path + suffix)
		if err != nil {
			t.Fatalf("stat %s: %v", path+suffix, err)
		}
		if got, want := st.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Fatalf("%s mode = %v, want %v", filepath.Base(path+suffix), got, want)
		}
	}
}

func TestOpenSetsApplicationIDAndVersion(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "PRAGMA application_id, user_version and journal_mode (TestPostgresSchemaRow for PostgreSQL)")
	db := demiurgetest.MustOpenDB(t)
	r := rawDB(t, db.OpenedWith())
	var appID, version int64
	var journal string
	if err := r.QueryRow("PRAGMA application_id").Scan(&appID); err != nil {
		t.Fatal(err)
	}
	if err := r.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := r.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if appID != store.ApplicationID || version != int64(store.SchemaVersion()) || journal != "wal" {
		t.Fatalf("application_id=%#x user_version=%d journal=%s, want %#x %d wal", appID, version, journal, store.ApplicationID, store.SchemaVersion())
	}
	var tables int
	if err := r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if got, want := tables, 23; got != want { // the 16 spec tables + hosts + session_leases + authored_state + channel_inbox + channel_states + core_revisions + core_live
		t.Fatalf("tables = %d, want %d", got, want)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, "k1", ev("test", "x", "test.event", map[string]any{"n": 1}))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = demiurgetest.MustOpenPath(t, path, store.Options{})
	seq, err := db.LastSeq(ctx, "test", "x")
	if err != nil || seq != 1 {
		t.Fatalf("LastSeq after reopen = %d, %v; want 1", seq, err)
	}
}

// snapshot returns the bytes of path and which sidecar files exist.
func snapshot(tb testing.TB, path string) ([]byte, []string) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var side []string
	for _, s := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + s); err == nil {
			side = append(side, s)
		}
	}
	return b, side
}

func TestOpenRefusesForeignDatabase(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "PRAGMA application_id of a foreign file (TestPostgresRefusesForeignSchema for PostgreSQL)")
	path := filepath.Join(t.TempDir(), "foreign.sqlite3")
	r, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(`CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('keep me')`); err != nil {
		t.Fatal(err)
	}
	r.Close()
	before, beforeSide := snapshot(t, path)
	st0, _ := os.Stat(path)

	_, err = store.Open(context.Background(), path, store.Options{})
	wantCode(t, err, demiurge.ESCHEMA)
	if msg := err.Error(); !bytes.Contains([]byte(msg), []byte("is not a Demiurge runtime database")) {
		t.Fatalf("error %q does not say the database is not ours", msg)
	}
	after, afterSide := snapshot(t, path)
	if !bytes.Equal(before, after) {
		t.Fatal("foreign database bytes changed")
	}
	if len(afterSide) != len(beforeSide) {
		t.Fatalf("sidecar files %v after open, %v before", afterSide, beforeSide)
	}
	st1, _ := os.Stat(path)
	if st0.Mode() != st1.Mode() {
		t.Fatalf("foreign database mode changed %v → %v", st0.Mode(), st1.Mode())
	}
}

func TestOpenRefusesNonSQLiteFile(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "a file that is not SQLite")
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	content := bytes.Repeat([]byte("this is not a database\n"), 300)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(context.Background(), path, store.Options{})
	wantCode(t, err, demiurge.ESCHEMA)
	after, _ := snapshot(t, path)
	if !bytes.Equal(content, after) {
		t.Fatal("non-database file changed")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "PRAGMA user_version (TestPostgresRefusesNewerSchema for PostgreSQL)")
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	db.Close()
	r, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	newer := store.SchemaVersion() + 7
	if _, err := r.Exec("PRAGMA user_version = " + itoa(newer)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	before, _ := snapshot(t, path)

	_, err = store.Open(context.Background(), path, store.Options{})
	wantCode(t, err, demiurge.ESCHEMA)
	want := "runtime database schema version " + itoa(newer) + " is newer than this build supports (" + itoa(store.SchemaVersion()) + ")"
	if err.Error() != want {
		t.Fatalf("error = %q, want %q", err.Error(), want)
	}
	after, _ := snapshot(t, path)
	if !bytes.Equal(before, after) {
		t.Fatal("newer database bytes changed")
	}
}

// Two handles opening one new file at once must create the schema once.
func TestConcurrentOpenOfNewFile(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	dbs := make([]*store.DB, 4)
	for i := range dbs {
		wg.Go(func() {
			dbs[i], errs[i] = store.Open(context.Background(), path, store.Options{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	mustAppend(t, dbs[0], "", ev("test", "x", "test.event", nil))
	if seq, err := dbs[3].LastSeq(context.Background(), "test", "x"); err != nil || seq != 1 {
		t.Fatalf("LastSeq via another handle = %d, %v", seq, err)
	}
}

// The same race between processes, as concurrent first runs of the CLI
// make it: each child opens the fresh file once (see TestOpenHelperProcess).
func TestConcurrentFirstOpenAcrossProcesses(t *testing.T) {
	rounds, procs := 30, 8
	if testing.Short() {
		rounds = 2
	}
	if demiurgetest.Engine() == store.Postgres {
		// The race of many rounds is SQLite's (a header read between
		// another opener's commits); on PostgreSQL the schema is created
		// under the write lock, and a few rounds show it.
		rounds = min(rounds, 3)
	}
	for round := range rounds {
		path := demiurgetest.TestDatabase(t)
		cmds := make([]*exec.Cmd, procs)
		outs := make([]bytes.Buffer, procs)
		for i := range cmds {
			c := exec.Command(os.Args[0], "-test.run=^TestOpenHelperProcess$")
			c.Env = append(os.Environ(), "STORE_OPEN_HELPER_PATH="+path)
			c.Stdout, c.Stderr = &outs[i], &outs[i]
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i] = c
		}
		var failures []string
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				failures = append(failures, fmt.Sprintf("process %d: %v: %s", i, err, outs[i].String()))
			}
		}
		if len(failures) > 0 {
			t.Fatalf("round %d: %v", round, failures)
		}
		db := demiurgetest.MustOpenPath(t, path, store.Options{})
		mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	}
}

// TestOpenHelperProcess is the child of TestConcurrentFirstOpenAcrossProcesses.
func TestOpenHelperProcess(t *testing.T) {
	path := os.Getenv("STORE_OPEN_HELPER_PATH")
	if path == "" {
		t.Skip("helper process only")
	}
	// Spread the starts over about one migration's time, so that some
	// probes land while another child's migration commits.
	time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
	db, err := store.Open(context.Background(), path, store.Options{Readers: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
