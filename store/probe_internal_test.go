package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// A migration that commits between two of the probe's header reads is not
// seen at all: the probe reads in one transaction, so it reports the file
// as empty (and migrate, under the write lock, then finds it finished)
// instead of mixing before and after ("application_id 0x0" with a schema,
// which reads as a foreign database). One case per gap between reads.
func TestProbeReadsHeaderInOneSnapshot(t *testing.T) {
	sqliteOnly(t)
	for gap := range 2 {
		t.Run(fmt.Sprintf("after read %d", gap), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			walFile(t, path)
			migrated := false
			hp := headerProbe{afterRead: func(read int) {
				if read != gap || migrated {
					return
				}
				migrated = true
				// Another opener's whole first open, commit included. The
				// file is in WAL mode, as a writer connection leaves it
				// before migrating, so the commit does not wait for the
				// probe's read transaction.
				db, err := Open(context.Background(), path, Options{})
				if err != nil {
					t.Errorf("concurrent open: %v", err)
					return
				}
				db.Close()
			}}

			if err := hp.probe(context.Background(), path); err != nil {
				t.Fatalf("probe during a concurrent migration: %v", err)
			}
			if !migrated {
				t.Fatal("the concurrent migration never ran")
			}
			db, err := Open(context.Background(), path, Options{})
			if err != nil {
				t.Fatalf("open after the race: %v", err)
			}
			db.Close()
		})
	}
}

// walFile creates an empty database file in WAL mode with no schema.
func walFile(t *testing.T, path string) {
	t.Helper()
	if err := ensureFile(path); err != nil {
		t.Fatal(err)
	}
	r, err := sql.Open("sqlite", dsn(path, "_journal_mode=WAL"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mode string
	if err := r.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
}
