package store

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/demiurge/demiurge"
)

// Options configures Open. The zero value is usable.
type Options struct {
	// Now is the clock; each write transaction reads it once. Default time.Now.
	Now func() time.Time
	// Readers is the size of the read-only connection pool. Default 4.
	Readers int
	// ProcessAlive reports whether the process that registered a host is
	// still the same live process (used by Reconcile and session leases).
	// The composition root passes process.Alive. Default: every process is
	// presumed alive, so only a stopped or expired lease counts as gone (the
	// conservative side: a live Host's work is never reconciled).
	ProcessAlive func(pid int, marker string) bool
	// Logger receives background failures (heartbeats, audit appends that
	// could not be written). Default: discard.
	Logger *slog.Logger
}

// DB is an open runtime store. It is safe for concurrent use by many
// goroutines, and several DBs (in one or several processes) may share a file.
type DB struct {
	path    string // the file, or the database named without user and password
	source  string // what Open was given (a URL may hold a password: never printed)
	dialect *dialect
	writer  *sql.DB       // MaxOpenConns=1; every transaction is BEGIN IMMEDIATE
	reader  *readPool     // query_only connections, statements prepared once
	ckpt    *checkpointer // SQLite only
	commits atomic.Int64  // write transactions committed (Commits)
	pub     publisher     // the commit observer (publish.go)
	wakes   wakes         // wake-up subscribers (notify.go)
	channel string        // PostgreSQL: the ledger's NOTIFY channel
	lsn     *listener     // PostgreSQL: the LISTEN connection's owner

	now          func() time.Time
	processAlive func(pid int, marker string) bool
	log          *slog.Logger
	hostname     string

	// wmu serialises write transactions on wconn, the writer pool's one
	// connection, held from the first write to Close; stmts are the
	// statements prepared on it (tx.go). Both are guarded by wmu.
	wmu   writerLock
	wconn *sql.Conn
	stmts map[string]*sql.Stmt
	// backstop is the automatic checkpoint set on wconn (checkpoint.go),
	// guarded by wmu.
	backstop int
	// writesClosed is set by Close under wmu: a write in progress has
	// finished, and every later one fails (closedError).
	writesClosed bool
	// turnEndKept is set once every statement of turnEndStatements is in
	// stmts, and cleared with them (prepare.go).
	turnEndKept atomic.Bool

	colMu sync.Mutex // guards cols
	cols  map[string]map[string]bool

	hostMu sync.Mutex // guards hosts, closed
	hosts  map[*Host]struct{}
	closed bool
}

// Open opens (creating if needed) the runtime database at path, or, when
// path is a postgres:// or postgresql:// URL (IsDatabaseURL), the ledger in
// that PostgreSQL database.
//
// A database that does not carry this build's application_id, or whose
// schema version is newer than this build knows, is refused with ESCHEMA and
// left byte-for-byte unchanged. A missing parent directory is created 0700;
// the database, -wal and -shm files are set to 0600. A URL that does not
// parse, and a PostgreSQL server that cannot be reached or refuses the
// login, fail with ECONFIG in one line naming host, port and database but
// never the URL's password.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "runtime database path is empty")
	}
	opts = opts.withDefaults()
	if IsDatabaseURL(path) {
		return openPostgres(ctx, path, opts)
	}
	return openSQLite(ctx, path, opts)
}

// withDefaults fills in the zero fields of o.
func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.ProcessAlive == nil {
		o.ProcessAlive = func(int, string) bool { return true }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// newDB is a DB without connections, named path, on engine e.
func newDB(path string, e Engine, opts Options) *DB {
	db := &DB{
		path:         path,
		dialect:      newDialect(e),
		now:          opts.Now,
		processAlive: opts.ProcessAlive,
		log:          opts.Logger,
		stmts:        map[string]*sql.Stmt{},
		cols:         map[string]map[string]bool{},
		hosts:        map[*Host]struct{}{},
	}
	db.hostname, _ = os.Hostname()
	return db
}

// Path returns the absolute path of the database file; on PostgreSQL,
// postgres://host:port/database (no user, no password).
func (db *DB) Path() string { return db.path }

// Engine returns the engine the DB runs on.
func (db *DB) Engine() Engine { return db.dialect.engine }

// Close stops the heartbeat of every Host still open on this DB (marking it
// stopped), then closes the connection pools, the read pool last
// (keeper.go).
func (db *DB) Close() error {
	return db.close(false)
}

// CloseForExit is Close for a process that exits right after it: it does
// every step of Close whose effect outlives the process (each Host is
// marked stopped, the background goroutines stop, a long process's log is
// truncated), and on SQLite it leaves the connections for the exit to
// release. Closing them writes nothing (keeper.go) and only frees
// SQLite's memory, one allocation at a time: the costliest step of a
// one-shot process's exit. After it the DB must not be used.
func (db *DB) CloseForExit() error {
	return db.close(db.dialect.engine == SQLite)
}

// closedError is what a call on a closed DB fails with.
func (db *DB) closedError() error {
	return demiurge.Errorf(demiurge.EUNAVAILABLE, "runtime database %s is closed", db.path)
}

func (db *DB) close(leaveConns bool) error {
	db.hostMu.Lock()
	db.closed = true
	hosts := make([]*Host, 0, len(db.hosts))
	for h := range db.hosts {
		hosts = append(hosts, h)
	}
	db.hostMu.Unlock()
	for _, h := range hosts {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := h.Close(ctx); err != nil {
			db.log.Warn("runtime store: stopping host on close", "host_id", h.ID(), "err", err)
		}
		cancel()
	}

	db.lsn.stop()
	var errs []error
	// A write in progress finishes first; none starts after.
	db.wmu.Lock()
	db.writesClosed = true
	if !leaveConns {
		errs = append(errs, db.closeWriterConn())
	}
	db.wmu.Unlock()
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.close())
	}
	if !leaveConns {
		if db.writer != nil {
			errs = append(errs, db.writer.Close())
		}
		if db.reader != nil {
			errs = append(errs, db.reader.Close()) // last: see keeper.go
		}
	}
	if err := errors.Join(errs...); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "close runtime database %s failed", db.path)
	}
	return nil
}
