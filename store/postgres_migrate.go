package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
)

// A PostgreSQL ledger is created from schema_postgres.sql at the version of
// the build that created it; a later build brings it up to date with the
// PostgreSQL steps of the migrations since: migrations_postgres/NNNN_*.sql
// is the step to version NNNN, in PostgreSQL's types. The chain starts at
// pgChainFrom, the first version whose build had PostgreSQL ledgers; every
// migration after it must have its step (TestPostgresMigrationChain).

//go:embed migrations_postgres/*.sql
var pgMigrationFS embed.FS

// pgChainFrom is the oldest schema version a PostgreSQL ledger can have.
const pgChainFrom = 8

// pgMigrations returns the PostgreSQL steps by the version they migrate
// to, read on first use; a broken embed is a build defect, so it panics.
var pgMigrations = sync.OnceValue(func() map[int]string {
	entries, err := fs.ReadDir(pgMigrationFS, "migrations_postgres")
	if err != nil {
		panic(err)
	}
	out := map[int]string{}
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			panic(fmt.Sprintf("store: PostgreSQL migration %s does not start with a version number", e.Name()))
		}
		b, err := pgMigrationFS.ReadFile("migrations_postgres/" + e.Name())
		if err != nil {
			panic(err)
		}
		out[v] = string(b)
	}
	return out
})

// migratePostgresFrom applies the PostgreSQL steps from version from to
// SchemaVersion inside tx (which holds the write lock) and records the new
// version. ESCHEMA when a step is missing: a ledger older than the chain.
func (db *DB) migratePostgresFrom(ctx context.Context, tx *sql.Tx, from int) error {
	steps := pgMigrations()
	for v := from + 1; v <= SchemaVersion(); v++ {
		if _, ok := steps[v]; !ok || from < pgChainFrom {
			return demiurge.Errorf(demiurge.ESCHEMA,
				"runtime database %s has schema version %d; this build has no PostgreSQL migration from it to %d",
				db.path, from, SchemaVersion())
		}
	}
	for v := from + 1; v <= SchemaVersion(); v++ {
		if _, err := tx.ExecContext(ctx, steps[v]); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database %s: PostgreSQL migration to version %d failed", db.path, v)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE demiurge_schema SET version = $1`, SchemaVersion()); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database %s: record schema version %d", db.path, SchemaVersion())
	}
	return nil
}
