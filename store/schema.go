package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/demiurge/demiurge"
)

// ApplicationID is written to PRAGMA application_id of every runtime
// database ("Demi" in ASCII). A file without it is not ours and is never
// modified.
const ApplicationID = 0x44656d69

//go:embed migrations/*.sql
var migrationFS embed.FS

// schemaSnapshot is the schema every migration together produces, as the
// CREATE statements of its tables and indexes. A new database gets it in
// place of the chain: SQLite re-parses the whole schema after each ALTER
// TABLE, which made creating a runtime home's database cost a parse of
// the schema per added column. TestSchemaSnapshotMatchesMigrations keeps
// it equal to the chain (and rewrites it with -update).
//
//go:embed schema_snapshot.sql
var schemaSnapshot string

// migration is one embedded schema step; its version is the number that
// prefixes its file name.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order, read on
// first use. Versions must
// be 1..N without gaps; a broken embed is a build defect, so it panics.
var migrations = sync.OnceValue(func() []migration {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		panic(err)
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic(fmt.Sprintf("store: migration %s does not start with a version number", name))
		}
		b, err := migrationFS.ReadFile("migrations/" + name)
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("store: migration %s: want version %d", m.name, i+1))
		}
	}
	return ms
})

// SchemaVersion is the newest schema version this build knows.
func SchemaVersion() int { return len(migrations()) }

// header is what identifies a database file.
type header struct {
	appID   int64
	version int
	objects int // rows in sqlite_schema
}

// read reads the header values. q must be a transaction, so that all of
// them come from one snapshot: read as separate statements outside one,
// they could straddle another process's migration commit (application_id
// still 0, schema already there) and a fresh file that a concurrent first
// run is creating would look foreign. The schema objects are counted only
// when both pragmas read 0, the one case check needs them for: counting
// makes the connection parse the whole schema, which a plain open does not need.
func (hp headerProbe) read(ctx context.Context, q *sql.Tx) (header, error) {
	var h header
	reads := []struct {
		query string
		dest  any
	}{
		{"PRAGMA application_id", &h.appID},
		{"PRAGMA user_version", &h.version},
		{"SELECT count(*) FROM sqlite_schema", &h.objects},
	}
	for i, r := range reads {
		if i == 2 && (h.appID != 0 || h.version != 0) {
			break
		}
		if err := q.QueryRowContext(ctx, r.query).Scan(r.dest); err != nil {
			return h, err
		}
		if hp.afterRead != nil {
			hp.afterRead(i)
		}
	}
	return h, nil
}

// headerProbe reads database headers. The zero value is the production
// probe.
type headerProbe struct {
	// afterRead, set only by tests, runs after each header read: the seam
	// where a test commits another opener's migration between two reads.
	afterRead func(read int)
}

// check reports why a database with header h must not be used, or nil.
func (h header) check(path string) error {
	switch {
	case h.appID == 0 && h.objects == 0 && h.version == 0:
		return nil // empty: ours to create
	case h.appID != ApplicationID:
		return demiurge.Errorf(demiurge.ESCHEMA,
			"%s is not a Demiurge runtime database (application_id %#x, want %#x); refusing to open or modify it",
			path, h.appID, ApplicationID)
	case h.version > SchemaVersion():
		return demiurge.Errorf(demiurge.ESCHEMA,
			"runtime database schema version %d is newer than this build supports (%d)", h.version, SchemaVersion())
	}
	return nil
}

// probe reads the header of path through a read-only connection, so a
// refused file is left untouched.
func (hp headerProbe) probe(ctx context.Context, path string) error {
	p, _, err := hp.open(ctx, path)
	if p != nil {
		p.Close()
	}
	return err
}

// open is probe that returns the connection of a file it accepts, and
// the header it read: Open makes it the DB's read pool, whose first
// connection it is (keeper.go).
func (hp headerProbe) open(ctx context.Context, path string) (*sql.DB, header, error) {
	p, err := sql.Open("sqlite", readDSN(path))
	if err != nil {
		return nil, header{}, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "open runtime database %s failed", path)
	}
	p.SetMaxOpenConns(1)
	p.SetMaxIdleConns(1)
	p.SetConnMaxLifetime(0)
	p.SetConnMaxIdleTime(0)
	h, err := hp.inReadTx(ctx, p)
	if err == nil {
		err = h.check(path)
	} else if isNotADB(err) {
		err = demiurge.WrapError(demiurge.ESCHEMA, err, "%s is not a SQLite database; refusing to open or modify it", path)
	} else {
		err = demiurge.WrapError(demiurge.EUNAVAILABLE, err, "read runtime database header %s failed", path)
	}
	if err != nil {
		p.Close()
		return nil, header{}, err
	}
	return p, h, nil
}

// inReadTx reads the header in one read transaction (a deferred BEGIN:
// it takes no write lock, so it never blocks a migration for long and never
// writes). The file is either empty, or carries a finished schema: migrate
// writes schema, application_id and user_version in one transaction.
func (hp headerProbe) inReadTx(ctx context.Context, p *sql.DB) (header, error) {
	tx, err := p.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return header{}, err
	}
	defer tx.Rollback()
	return hp.read(ctx, tx)
}

// migrate applies the embedded migrations the database lacks, in one
// BEGIN IMMEDIATE transaction that re-reads the header first, so two
// processes opening a new file at once create the schema exactly once.
// Open skips it when the probe found the schema of this build: nothing
// would be written, and the write lock is not worth taking to learn so.
func (db *DB) migrate(ctx context.Context) error {
	return db.retryBusy(ctx, func() error {
		tx, err := db.writer.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		h, err := headerProbe{}.read(ctx, tx)
		if err != nil {
			return err
		}
		if err := h.check(db.path); err != nil {
			return err
		}
		if h.version == SchemaVersion() {
			return tx.Commit()
		}
		if err := applySchema(ctx, tx, h.version); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion())); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// applySchema brings a database at version from to SchemaVersion: a new
// one (0) gets the snapshot, an older one the migrations it lacks.
func applySchema(ctx context.Context, tx *sql.Tx, from int) error {
	if from == 0 {
		if _, err := tx.ExecContext(ctx, schemaSnapshot); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database schema creation failed")
		}
		return nil
	}
	for _, m := range migrations()[from:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database migration %s failed", m.name)
		}
	}
	return nil
}

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// isBusy reports a transient conflict worth retrying the transaction for:
// SQLITE_BUSY/LOCKED, or PostgreSQL's serialization failure, deadlock and
// lock timeout.
func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED || pgRetryable(err)
}

func isNotADB(err error) bool { return sqliteCode(err) == sqlite3.SQLITE_NOTADB }
