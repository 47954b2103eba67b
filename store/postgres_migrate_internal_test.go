package store

import "testing"

// Every migration after the first version a PostgreSQL ledger can have
// ships its PostgreSQL step, and no step names a version beyond the chain.
func TestPostgresMigrationChain(t *testing.T) {
	steps := pgMigrations()
	for v := pgChainFrom + 1; v <= SchemaVersion(); v++ {
		if steps[v] == "" {
			t.Errorf("migration %d has no PostgreSQL step in migrations_postgres/", v)
		}
	}
	for v := range steps {
		if v <= pgChainFrom || v > SchemaVersion() {
			t.Errorf("migrations_postgres/ has a step to version %d, outside %d..%d", v, pgChainFrom+1, SchemaVersion())
		}
	}
}
