package demiurgetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// MustOpenDB opens a fresh runtime database at runtime/runtime.sqlite3 of
// a temporary directory, as a runtime home lays it out, and closes it when
// the test ends. opts (at most one) configure it as in MustOpenPath.
func MustOpenDB(tb testing.TB, opts ...store.Options) *store.DB {
	tb.Helper()
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return MustOpenPath(tb, filepath.Join(tb.TempDir(), "runtime", "runtime.sqlite3"), o)
}

// MustOpenPath opens the database at path and closes it when the test
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
