package demiurgetest

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// MustOpenDB opens a fresh runtime database at TestDatabase (on SQLite
// runtime/runtime.sqlite3 of a temporary directory, as a runtime home lays
// it out; in the PostgreSQL run of RunEngines a schema of its own) and
// closes it when the test ends. opts (at most one) configure it as in
// MustOpenPath.
func MustOpenDB(tb testing.TB, opts ...store.Options) *store.DB {
	tb.Helper()
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return MustOpenPath(tb, TestDatabase(tb), o)
}

// MustOpenPath opens the database at path (a file or a postgres:// URL) and closes it when the test
// ends (closing an already closed database is harmless). Unless o says
// otherwise, processes of this machine are asked whether they live, as
// the composition root does.
func MustOpenPath(tb testing.TB, path string, o store.Options) *store.DB {
	tb.Helper()
	if o.ProcessAlive == nil {
		o.ProcessAlive = process.Alive
	}
	db, err := store.Open(context.Background(), path, o)
	if err != nil {
		tb.Fatalf("open store %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close store %s: %v", path, err)
		}
	})
	return db
}
