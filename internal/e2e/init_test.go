package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// init creates the runtime database the contract names: 0600, WAL, with
// the schema (application_id set), and says so; a second init is a no-op.
func TestInitCreatesRuntimeDatabase(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "init")
	if r.code != 0 || !strings.Contains(r.stdout, "created runtime/runtime.sqlite3") {
		t.Fatalf("init: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	path := filepath.Join(e.home, "runtime", "runtime.sqlite3")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("init left no runtime database: %v", err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Fatalf("runtime.sqlite3 mode %v, want 0600", got)
	}
	// Bytes 18 and 19 of the header are 2 once the file is in WAL mode;
	// read them raw so that nothing here changes the file.
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 100 {
		t.Fatalf("read header: %d bytes, %v", len(b), err)
	}
	if b[18] != 2 || b[19] != 2 {
		t.Fatalf("journal format bytes %d/%d, want 2/2 (WAL)", b[18], b[19])
	}
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var appID int64
	var journal string
	if err := db.QueryRow("PRAGMA application_id").Scan(&appID); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if appID != 0x44656d69 || journal != "wal" {
		t.Fatalf("application_id %#x journal %q, want 0x44656d69 wal", appID, journal)
	}
	again := e.run("", "init")
	if again.code != 0 || strings.Contains(again.stdout, "created") {
		t.Fatalf("second init: exit %d stdout %q stderr %q", again.code, again.stdout, again.stderr)
	}
}

// Concurrent first runs on a fresh home all succeed: the home is installed
// once, the database created and migrated once, and no run mistakes
// another's half-done migration for a foreign database. Several rounds,
// because the window is short.
func TestConcurrentFirstRuns(t *testing.T) {
	deadline := time.Now().Add(50 * time.Second)
	for _, n := range []int{6, 12} {
		for round := range 6 {
			if time.Now().After(deadline) {
				t.Logf("stopping before %d×%d: time budget spent", n, round)
				return
			}
			e := newEnv(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			var wg sync.WaitGroup
			errs := make([]string, n)
			for i := range n {
				wg.Go(func() {
					out, err := e.cmd(ctx, "", "run", "hello").CombinedOutput()
					if err != nil || strings.TrimSpace(string(out)) != "[fake] hello" {
						errs[i] = fmt.Sprintf("run %d: %v: %s", i, err, out)
					}
				})
			}
			wg.Wait()
			cancel()
			for _, msg := range errs {
				if msg != "" {
					t.Errorf("%d concurrent first runs, round %d: %s", n, round, msg)
				}
			}
			if t.Failed() {
				return
			}
			// One conversation, six or twelve turns, one schema.
			list := e.run("", "sessions", "list", "--json")
			if list.code != 0 {
				t.Fatalf("sessions list: %s", list.stderr)
			}
		}
	}
}
