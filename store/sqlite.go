package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeoutMS is SQLite's own wait for a lock, per statement. It is longer
// than the original's 0.1 s because connections here are long-lived and
// shared: the transaction-level retry (writeAttempts) sits on top of it.
const busyTimeoutMS = 1000

// openSQLite opens (creating if needed) the SQLite file at path: Open's
// engine for a path.
func openSQLite(ctx context.Context, path string, opts Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINVALID, err, "runtime database path %q cannot be made absolute", path)
	}
	if err := ensureFile(abs); err != nil {
		return nil, err
	}
	// Check ownership and version before anything can write to the file.
	// The connection that reads the header is the read pool's first.
	readers, found, err := headerProbe{}.open(ctx, abs)
	if err != nil {
		return nil, err
	}

	db := newDB(abs, SQLite, opts)
	db.source = abs
	db.reader = newReadPool(readers, db.dialect)

	db.writer, err = sql.Open("sqlite", dsn(abs,
		"_txlock=immediate",
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeoutMS),
		"_pragma=foreign_keys(1)",
		"_pragma=cache_size(-16384)", // 16 MiB: projections touch many b-trees per batch
		// The checkpointer keeps the log short (checkpoint.go); this is
		// its backstop.
		fmt.Sprintf("_pragma=wal_autocheckpoint(%d)", walBackstopPages),
		"_journal_mode=WAL",
		"_synchronous=NORMAL",
	))
	if err != nil {
		db.Close()
		return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "open runtime database %s failed", abs)
	}
	db.writer.SetMaxOpenConns(1)
	db.writer.SetMaxIdleConns(1)
	db.writer.SetConnMaxLifetime(0)
	db.writer.SetConnMaxIdleTime(0)

	if found.appID != ApplicationID || found.version != SchemaVersion() {
		if err := db.migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}

	db.reader.SetMaxOpenConns(opts.Readers)
	db.reader.SetMaxIdleConns(opts.Readers)
	if err := db.restrictFiles(); err != nil {
		db.Close()
		return nil, err
	}
	db.keep(ctx)
	db.ckpt = startCheckpointer(abs)
	return db, nil
}

// readDSN is the DSN of the read pool's connections: read-only (keeper.go).
func readDSN(path string) string {
	return dsn(path, "mode=ro", fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeoutMS), "_pragma=query_only(1)")
}

// dsn builds a modernc.org/sqlite DSN: a file: URI (so that '?', '#' and '%'
// in the path are escaped) with driver parameters.
func dsn(path string, params ...string) string {
	u := url.URL{Path: path}
	s := "file:" + u.EscapedPath()
	for i, p := range params {
		if i == 0 {
			s += "?"
		} else {
			s += "&"
		}
		s += p
	}
	return s
}

// ensureFile creates the parent directory (0700) and the database file
// (0600) when they are missing, so that no moment exists in which the
// database is readable by others. A new file holds the empty database of
// this build's schema (createEmpty), or, where it cannot be linked into
// place, nothing, and Open creates the schema in it.
func ensureFile(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create runtime directory %s: %s", dir, demiurge.IOReason(err))
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "chmod runtime directory %s: %s", dir, demiurge.IOReason(err))
		}
	} else if err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "stat runtime directory %s: %s", dir, demiurge.IOReason(err))
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := createEmpty(path); err == nil {
			return nil
		} else if !errors.Is(err, errors.ErrUnsupported) {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create runtime database %s: %s", path, demiurge.IOReason(err))
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case os.IsExist(err):
		return nil
	default:
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create runtime database %s: %s", path, demiurge.IOReason(err))
	}
}

// restrictFiles sets the database, -wal and -shm files to 0600. SQLite gives
// new -wal/-shm files the database file's mode, so later ones follow.
func (db *DB) restrictFiles() error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		p := db.path + suffix
		if err := os.Chmod(p, 0o600); err != nil && !os.IsNotExist(err) {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "chmod %s: %s", p, demiurge.IOReason(err))
		}
	}
	return nil
}
