package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/demiurge/demiurge"
)

// writeAttempts is how often a write transaction is tried when SQLite reports
// the database busy or locked.
const writeAttempts = 6

// wtx is one write transaction. now is read once per attempt, so every row
// and event written by the transaction carries the same time.
type wtx struct {
	ctx   context.Context
	db    *DB
	tx    *sql.Tx
	now   time.Time
	stmts map[string]*sql.Stmt // statements prepared for this transaction only (past maxWriteStmts)

	// Pending derived session fields of the current append batch
	// (project_message.go).
	sessionDeltas map[string]*sessionDelta
	sessionOrder  []string

	// observing: the commit observer wanted this transaction's events
	// when it began; published are the events it inserted (publish.go).
	observing bool
	published []demiurge.Event

	// rowsOnly: the transaction took no ledger lock (writeRows) and may
	// not append.
	rowsOnly bool

	// notes are the wake-up topics this transaction announces when it
	// commits; queuedNotes those of the tasks it queued, dropped again
	// when the same transaction starts or ends the task (notify.go).
	notes       map[string]struct{}
	queuedNotes map[string]string
}

// write runs fn in a BEGIN IMMEDIATE transaction on the single writer
// connection and commits it. On SQLITE_BUSY/LOCKED the whole transaction is
// rolled back and retried (writeAttempts in all, backoff 25ms·2^n plus up to
// 10ms jitter), so fn must not keep effects outside the transaction.
//
// ctx is honoured before each attempt, but an attempt once begun runs to
// its end: cancelling a transaction mid-flight makes database/sql discard
// the writer connection, which SQLite cannot free while a statement of it
// is unfinalized, so its files would stay open for the life of the
// process. A write transaction is short; the busy timeout bounds its wait.
func (db *DB) write(ctx context.Context, fn func(t *wtx) error) error {
	return db.writeAs(ctx, writeOrdered, fn)
}

// writeUrgent is write for a transaction someone outside waits on (a
// channel's accept): it takes the writer before the other waiters of
// this DB (writerLock).
func (db *DB) writeUrgent(ctx context.Context, fn func(t *wtx) error) error {
	return db.writeAs(ctx, writeOrdered|writeFirst, fn)
}

// writeRows is write for a transaction that changes rows under their own
// row locks and appends no event (a task claim): on PostgreSQL it does not
// take the ledger's write lock, so the claims of several Hosts run side by
// side (FOR UPDATE SKIP LOCKED), and nothing it writes has a seq to order.
// An append in it fails.
func (db *DB) writeRows(ctx context.Context, fn func(t *wtx) error) error {
	return db.writeAs(ctx, 0, fn)
}

// writeMode says how a write transaction takes its locks.
type writeMode int

const (
	writeOrdered writeMode = 1 << iota // takes the ledger's write lock: may append events
	writeFirst                         // served before the other waiters of this DB (writerLock)
)

func (db *DB) writeAs(ctx context.Context, mode writeMode, fn func(t *wtx) error) error {
	return db.retryBusy(ctx, func() error {
		if ctx.Err() != nil {
			return ctxError(ctx, "runtime database write")
		}
		wctx := context.WithoutCancel(ctx)
		if mode&writeFirst != 0 {
			db.wmu.LockUrgent()
		} else {
			db.wmu.Lock()
		}
		defer db.wmu.Unlock()
		if db.writesClosed {
			return db.closedError()
		}
		conn, err := db.writerConn(wctx)
		if err != nil {
			return err
		}
		tx, err := conn.BeginTx(wctx, nil)
		if err != nil {
			db.dropWriterConn(err)
			return err
		}
		t := &wtx{ctx: wctx, db: db, tx: tx, now: db.now().UTC(), stmts: map[string]*sql.Stmt{}, observing: db.pub.observing(),
			rowsOnly: mode&writeOrdered == 0}
		if err := t.lock(); err != nil {
			tx.Rollback()
			db.dropWriterConn(err)
			return err
		}
		if err := fn(t); err != nil {
			tx.Rollback()
			db.dropWriterConn(err)
			return err
		}
		topics := t.topics()
		if err := t.announce(topics); err != nil {
			tx.Rollback()
			db.dropWriterConn(err)
			return err
		}
		if err := t.commit(); err != nil {
			db.dropWriterConn(err)
			return err
		}
		db.wakes.fire(topics...)
		n := db.commits.Add(1)
		if db.ckpt != nil {
			db.ckpt.committed(n)
		}
		return nil
	})
}

// lock takes the ledger's write lock on PostgreSQL (sqlWriteLock); on
// SQLite, BEGIN IMMEDIATE took the database's.
//
// A row-only transaction (writeRows) takes no lock and does not wait for
// its commit to reach the disk (synchronous_commit off): what it writes
// is a lease (a claim, a heartbeat), and PostgreSQL's log is one
// sequence, so the next ordinary commit of this Host (a claimed task's
// start) flushes it too. A crash of the server before that loses only
// the lease, which then was never used.
func (t *wtx) lock() error {
	if t.db.dialect.engine != Postgres {
		return nil
	}
	if t.rowsOnly {
		_, err := t.exec(`SET LOCAL synchronous_commit TO OFF`)
		return err
	}
	_, err := t.exec(sqlWriteLock)
	return err
}

// Commits returns how many write transactions this DB has committed since
// Open: what a unit of work costs, for tests and diagnostics.
func (db *DB) Commits() int64 { return db.commits.Load() }

// retryBusy runs op until it succeeds, fails with an error other than
// busy/locked, or writeAttempts are used up. Errors come back coded.
func (db *DB) retryBusy(ctx context.Context, op func() error) error {
	var err error
	for attempt := 0; attempt < writeAttempts; attempt++ {
		if attempt > 0 {
			d := 25*time.Millisecond<<(attempt-1) + rand.N(10*time.Millisecond)
			timer := time.NewTimer(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctxError(ctx, "runtime database write")
			case <-timer.C:
			}
		}
		err = op()
		if err == nil || !isBusy(err) {
			break
		}
	}
	return db.codeError(ctx, err)
}

// codeError turns a driver error into a coded one; coded errors pass.
func (db *DB) codeError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var coded *demiurge.Error
	if errors.As(err, &coded) {
		return err
	}
	if ctx.Err() != nil {
		return ctxError(ctx, "runtime database")
	}
	if isBusy(err) {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "runtime database %s is busy", db.path)
	}
	if db.dialect.engine == Postgres && pgConnLost(err) {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "runtime database %s is unreachable: %s", db.path, pgReason(err))
	}
	return demiurge.WrapError(demiurge.EINTERNAL, err, "runtime database %s: statement failed", db.path)
}

// ctxError codes ctx's error: ETIMEOUT for a passed deadline, else ECANCELED.
func ctxError(ctx context.Context, what string) error {
	err := ctx.Err()
	if err == context.DeadlineExceeded {
		return demiurge.WrapError(demiurge.ETIMEOUT, err, "%s: deadline exceeded", what)
	}
	return demiurge.WrapError(demiurge.ECANCELED, err, "%s: cancelled", what)
}

// stmt returns q prepared for this transaction. Statements are prepared on
// the writer connection the first time any transaction uses them and kept
// for the life of the DB: run on that connection, they run inside its open
// transaction. A process prepares only what it uses (a one-shot run a
// fraction of the store's statements); past maxWriteStmts distinct texts a
// statement is prepared for this transaction alone.
func (t *wtx) stmt(q string) (*sql.Stmt, error) {
	if s, ok := t.db.stmts[q]; ok {
		return s, nil
	}
	if s, ok := t.stmts[q]; ok {
		return s, nil
	}
	if s, kept, err := t.db.keepStmt(t.ctx, t.db.wconn, q); kept || err != nil {
		return s, err
	}
	s, err := t.tx.PrepareContext(t.ctx, t.db.dialect.sql(q))
	if err != nil {
		return nil, err
	}
	t.stmts[q] = s
	return s, nil
}

func (t *wtx) exec(q string, args ...any) (sql.Result, error) {
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(t.ctx, args...)
}

func (t *wtx) queryRow(q string, args ...any) *sql.Row {
	s, err := t.stmt(q)
	if err != nil {
		// A Row cannot carry an error; run the statement unprepared so the
		// error surfaces from Scan.
		return t.tx.QueryRowContext(t.ctx, t.db.dialect.sql(q), args...)
	}
	return s.QueryRowContext(t.ctx, args...)
}

func (t *wtx) query(q string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(t.ctx, args...)
}

// nowText is the transaction time in storage form.
func (t *wtx) nowText() string { return demiurge.FormatTime(t.now) }

// maxWriteStmts bounds the statements kept prepared on the writer: the
// store's writes are a fixed set of texts.
const maxWriteStmts = 512

// writerConn returns the writer connection, taking it from the pool the
// first time and again after dropWriterConn. The caller holds db.wmu.
func (db *DB) writerConn(ctx context.Context) (*sql.Conn, error) {
	if db.wconn == nil {
		conn, err := db.writer.Conn(ctx)
		if err != nil {
			return nil, err
		}
		db.wconn, db.backstop = conn, walBackstopPages // the DSN sets it
	}
	if db.ckpt != nil && db.backstop != db.ckpt.backstop() {
		db.raiseBackstop(ctx)
	}
	return db.wconn, nil
}

// raiseBackstop sets the writer's automatic checkpoint to what the
// checkpointer asks for now (checkpoint.go). It is advice: a failure is
// logged and the writer keeps the backstop it had (a connection that
// failed it fails the write's BEGIN next). The caller holds db.wmu.
func (db *DB) raiseBackstop(ctx context.Context) {
	pages := db.ckpt.backstop()
	if _, err := db.wconn.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint(%d)", pages)); err != nil {
		db.log.Warn("runtime store: raising the automatic checkpoint", "pages", pages, "err", err)
	}
	db.backstop = pages
}

// dropWriterConn gives the writer connection back when err says
// database/sql closed it (a driver reported it bad), with the statements
// prepared on it, so that the next write takes a fresh one. The caller
// holds db.wmu.
func (db *DB) dropWriterConn(err error) {
	lost := errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) ||
		db.dialect.engine == Postgres && pgConnLost(err)
	if db.wconn == nil || !lost {
		return
	}
	db.closeWriterConn()
}

// keepStmt prepares q on conn, the writer connection, and keeps it for
// the life of the connection, while fewer than maxWriteStmts are kept
// (kept false otherwise, and nothing is prepared). The caller holds db.wmu
// and has found q not kept yet.
func (db *DB) keepStmt(ctx context.Context, conn *sql.Conn, q string) (s *sql.Stmt, kept bool, err error) {
	if len(db.stmts) >= maxWriteStmts {
		return nil, false, nil
	}
	if s, err = conn.PrepareContext(ctx, db.dialect.sql(q)); err != nil {
		return nil, false, err
	}
	db.stmts[q] = s
	return s, true, nil
}

// closeWriterConn closes the prepared statements and returns the writer
// connection to its pool. The caller holds db.wmu.
func (db *DB) closeWriterConn() error {
	for q, s := range db.stmts {
		s.Close()
		delete(db.stmts, q)
	}
	db.turnEndKept.Store(false)
	if db.wconn == nil {
		return nil
	}
	err := db.wconn.Close()
	db.wconn = nil
	if errors.Is(err, sql.ErrConnDone) {
		return nil
	}
	return err
}
