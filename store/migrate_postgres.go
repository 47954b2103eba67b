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

// firstPostgresVersion is the schema version of the first build that could
// create a PostgreSQL ledger: a ledger is never older, so the chain of
// PostgreSQL steps starts after it.
const firstPostgresVersion = 8

//go:embed migrations_postgres/*.sql
var postgresMigrationFS embed.FS

// postgresMigrations returns the PostgreSQL step of every migration after
// firstPostgresVersion, by version. Each SQLite migration from then on
// ships its PostgreSQL step beside it (migrations_postgres/, same file
// name); TestPostgresMigrationsCoverChain fails a build that forgets one.
var postgresMigrations = sync.OnceValue(func() map[int]migration {
	entries, err := fs.ReadDir(postgresMigrationFS, "migrations_postgres")
	if err != nil {
		panic(err)
	}
	out := map[int]migration{}
	for _, e := range entries {
		name := e.Name()
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			panic(fmt.Sprintf("store: PostgreSQL migration %s does not start with a version number", name))
		}
		b, err := postgresMigrationFS.ReadFile("migrations_postgres/" + name)
		if err != nil {
			panic(err)
		}
		out[v] = migration{version: v, name: name, sql: string(b)}
	}
	return out
})

// upgradePostgres applies the PostgreSQL steps from version from to
// SchemaVersion inside tx (the caller holds the write lock) and records
// the new version. A ledger older than firstPostgresVersion, or a step
// this build lacks, is refused with ESCHEMA and left unchanged.
func (db *DB) upgradePostgres(ctx context.Context, tx *sql.Tx, from int) error {
	steps := postgresMigrations()
	for v := from + 1; v <= SchemaVersion(); v++ {
		m, ok := steps[v]
		if !ok || from < firstPostgresVersion {
			return demiurge.Errorf(demiurge.ESCHEMA,
				"runtime database %s has schema version %d; this build has no PostgreSQL migration from it to %d",
				db.path, from, SchemaVersion())
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database migration %s failed", m.name)
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE demiurge_schema SET version = $1`, SchemaVersion())
	return err
}
