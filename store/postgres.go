package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/demiurge/demiurge"
)

// schemaPostgres is the schema of a new PostgreSQL ledger: the tables and
// indexes of schemaSnapshot in PostgreSQL's types, at SchemaVersion.
//
//go:embed schema_postgres.sql
var schemaPostgres string

// IsDatabaseURL reports whether s names a PostgreSQL database
// (postgres:// or postgresql://) rather than an SQLite file.
func IsDatabaseURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// DescribeURL names the database of a postgres:// URL as host:port/database
// (user and password left out), for messages. A URL that does not parse
// (a bad port, a password with an unescaped '/' or '#') is named by its
// parts as written (describeRaw); "" when it has none.
func DescribeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || strings.Contains(u.Path, "@") {
		return describeRaw(s)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "5432"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = u.User.Username()
	}
	return "postgres://" + host + ":" + port + "/" + db
}

// describeRaw is DescribeURL for what url.Parse refuses or misreads.
// Everything up to the last '@' is dropped (user and password: a
// password may hold any character, a host name never an '@'), then the
// host[:port] runs to the first '/', the database to the first '?' or '#'.
func describeRaw(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	hostport, db, _ := strings.Cut(rest, "/")
	if hostport == "" && db == "" {
		return ""
	}
	host, port := hostport, "5432"
	if i := strings.LastIndex(hostport, ":"); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
	}
	if host == "" {
		host = "localhost"
	}
	return "postgres://" + host + ":" + port + "/" + db
}

// sqlWriteLock is the first statement of every write transaction on
// PostgreSQL: a transaction-scoped advisory lock per ledger (per schema of
// the database), released by COMMIT or ROLLBACK. It does for several
// Hosts what SQLite's single writer does for several processes: write
// transactions of one ledger run one at a time, so the store's
// read-check-write steps (idempotency keys, Expected guards, leases,
// claims) need no retry loop, and seq values commit in seq order (a
// reader paging Events after a cursor never skips a later-committed lower
// seq). Reads take no lock and see every committed write (READ COMMITTED).
const sqlWriteLock = `SELECT pg_advisory_xact_lock(hashtext('demiurge.write:' || current_schema()))`

// openPostgres opens the ledger in the PostgreSQL database rawURL names
// (its search_path, when the URL sets one, picks the schema).
func openPostgres(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	name := DescribeURL(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "runtime database URL %s is not valid: %s", name, pgReason(err))
	}
	name = fmt.Sprintf("postgres://%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	db := newDB(name, Postgres, opts)
	db.source = rawURL

	db.writer = stdlib.OpenDB(*cfg)
	db.writer.SetMaxOpenConns(1)
	db.writer.SetMaxIdleConns(1)
	db.writer.SetConnMaxLifetime(0)
	db.writer.SetConnMaxIdleTime(0)
	if err := db.writer.PingContext(ctx); err != nil {
		db.Close()
		return nil, pgConnectError(name, err)
	}
	if err := db.migratePostgres(ctx); err != nil {
		db.Close()
		return nil, err
	}

	var schema string
	if err := db.writer.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		db.Close()
		return nil, pgConnectError(name, err)
	}
	db.channel = ledgerChannel(schema)
	db.lsn = db.startListener(cfg.Copy(), db.channel)

	rcfg := cfg.Copy()
	rcfg.RuntimeParams["default_transaction_read_only"] = "on"
	db.reader = newReadPool(stdlib.OpenDB(*rcfg), db.dialect)
	db.reader.SetMaxOpenConns(opts.Readers)
	db.reader.SetMaxIdleConns(opts.Readers)
	if err := db.reader.PingContext(ctx); err != nil {
		db.Close()
		return nil, pgConnectError(name, err)
	}
	return db, nil
}

// migratePostgres creates the schema of an empty ledger, or migrates an
// older one, under the write lock so that two Hosts starting at once do it
// exactly once, and refuses one that is not ours or newer than this build.
func (db *DB) migratePostgres(ctx context.Context) error {
	return db.retryBusy(ctx, func() error {
		tx, err := db.writer.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, sqlWriteLock); err != nil {
			return err
		}
		h, err := readPostgresHeader(ctx, tx)
		if err != nil {
			return err
		}
		if err := h.check(db.path); err != nil {
			return err
		}
		switch {
		case h.version == SchemaVersion():
			return tx.Commit()
		case h.version != 0:
			// A PostgreSQL ledger starts at the version of the build that
			// created it; the PostgreSQL steps of later migrations bring
			// it up to date (postgres_migrate.go).
			if err := db.migratePostgresFrom(ctx, tx, h.version); err != nil {
				return err
			}
			return tx.Commit()
		}
		if _, err := tx.ExecContext(ctx, schemaPostgres); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database schema creation failed")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO demiurge_schema (application_id, version) VALUES ($1, $2)`,
			ApplicationID, SchemaVersion()); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// readPostgresHeader reads what identifies a ledger in the current schema:
// its table count and the demiurge_schema row (application_id 0 and
// version 0 when the table is missing).
func readPostgresHeader(ctx context.Context, tx *sql.Tx) (header, error) {
	var h header
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
  WHERE table_schema = current_schema()`).Scan(&h.objects); err != nil {
		return h, err
	}
	var found bool
	if err := tx.QueryRowContext(ctx, `SELECT to_regclass('demiurge_schema') IS NOT NULL`).Scan(&found); err != nil || !found {
		return h, err
	}
	err := tx.QueryRowContext(ctx, `SELECT application_id, version FROM demiurge_schema`).Scan(&h.appID, &h.version)
	if isNoRows(err) {
		err = nil
	}
	return h, err
}

// pgConnectError is the one line a refused or failed connection at Open
// becomes: ECONFIG (the URL names no database this Host can use), the
// database named by host, port and name, and the reason, never the URL's
// password.
func pgConnectError(name string, err error) error {
	return demiurge.WrapError(demiurge.ECONFIG, errors.New(pgReason(err)),
		"runtime database %s is unreachable: %s", name, pgReason(err))
}

// pgReason is the innermost message of a connection error: what went
// wrong ("connection refused", "password authentication failed ...").
func pgReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// pgCode returns the SQLSTATE of a PostgreSQL error, "" for others.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgRetryable: serialization failures, deadlocks and lock timeouts are
// retried like SQLITE_BUSY.
func pgRetryable(err error) bool {
	switch pgCode(err) {
	case "40001", "40P01", "55P03":
		return true
	}
	return false
}

// pgConnLost reports a lost connection: the server's connection exception
// (class 08) or shutdown (57P01-57P03), a closed or bad connection, or the
// network failing under it (EOF, a net.Error). The writer connection must
// be replaced.
func pgConnLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P0")
	}
	var ne net.Error
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}
