package store

import (
	"os"
	"testing"
)

// sqliteOnly skips an internal test in the PostgreSQL run of the
// conformance suite (demiurgetest.RunEngines, which these tests cannot
// import): they test the SQLite engine's own parts (query plans, the
// checkpointer, the header probe, the migration chain), which run on an
// SQLite file in either run.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("DEMIURGE_TEST_ENGINE") == string(Postgres) {
		t.Skip("SQLite only: a part of the SQLite engine")
	}
}
