package store

import (
	"context"
	"database/sql"
	"errors"
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
	stmts map[string]*sql.Stmt // tx-bound forms of db.stmts, closed with tx

	// Pending derived session fields of the current append batch
	// (project_message.go).
	sessionDeltas map[string]*sessionDelta
	sessionOrder  []string

	// observing: the commit observer wanted this transaction's events
	// when it began; published are the events it inserted (publish.go).
	observing bool
	published []demiurge.Event
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
	return db.retryBusy(ctx, func() error {
		if ctx.Err() != nil {
			return ctxError(ctx, "runtime database write")
		}
		wctx := context.WithoutCancel(ctx)
		tx, err := db.writer.BeginTx(wctx, nil)
		if err != nil {
			return err
		}
		t := &wtx{ctx: wctx, db: db, tx: tx, now: db.now().UTC(), stmts: map[string]*sql.Stmt{}, observing: db.pub.observing()}
		if err := fn(t); err != nil {
			tx.Rollback()
			return err
		}
		if err := t.commit(); err != nil {
			return err
		}
		n := db.commits.Add(1)
		if db.ckpt != nil {
			db.ckpt.committed(n)
		}
		return nil
	})
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

// stmt returns q bound to this transaction. Statements registered with
// prep are prepared once on the writer at Open and reused by every
// transaction; any other text is prepared once per transaction. (Preparing on
// the writer pool inside a transaction would wait for the pool's only
// connection, which the transaction holds.)
func (t *wtx) stmt(q string) (*sql.Stmt, error) {
	if s, ok := t.stmts[q]; ok {
		return s, nil
	}
	var ts *sql.Stmt
	if s := t.db.stmts[q]; s != nil {
		ts = t.tx.StmtContext(t.ctx, s)
	} else {
		var err error
		if ts, err = t.tx.PrepareContext(t.ctx, q); err != nil {
			return nil, err
		}
	}
	t.stmts[q] = ts
	return ts, nil
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
		return t.tx.QueryRowContext(t.ctx, q, args...)
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

// registered holds every statement text made with prep.
var registered []string

// prep registers a statement text for preparing at Open and returns it.
// Use it for package-level statement variables only.
func prep(q string) string {
	registered = append(registered, q)
	return q
}

// prepareAll prepares every registered statement on the writer. It runs in
// Open before any transaction, so db.stmts is read-only afterwards.
func (db *DB) prepareAll(ctx context.Context) error {
	for _, q := range registered {
		if _, ok := db.stmts[q]; ok {
			continue
		}
		s, err := db.writer.PrepareContext(ctx, q)
		if err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "prepare runtime statement %q failed", q)
		}
		db.stmts[q] = s
	}
	return nil
}
