package store

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// Polling of a busy session lease.
const (
	leasePollStart = 5 * time.Millisecond
	leasePollMax   = 100 * time.Millisecond
)

var (
	sqlLeaseGet        = `SELECT holder, host_id FROM session_leases WHERE session_id = ?`
	sqlLeaseInsert     = `INSERT INTO session_leases (session_id, holder, host_id, acquired_at) VALUES (?, ?, ?, ?)`
	sqlLeaseTakeOver   = `UPDATE session_leases SET holder = ?, host_id = ?, acquired_at = ? WHERE session_id = ? AND holder = ? AND host_id = ?`
	sqlLeaseRelease    = `DELETE FROM session_leases WHERE session_id = ? AND holder = ? AND host_id = ?`
	sqlLeaseDeleteHost = `DELETE FROM session_leases WHERE session_id = ? AND host_id = ?`
)

// AcquireSessionLease takes the cross-process admission lease of a session
// for holder (unique per acquisition, e.g. a turn id) on Host hostID. It
// succeeds at once when the lease is free or held by a gone Host (then it is
// taken over); otherwise it polls (5 ms doubling to 100 ms) until the lease
// frees or ctx ends, and then fails with ECANCELED or ETIMEOUT.
//
// release deletes the lease only if it is still this holder's; it runs even
// when its ctx is already cancelled (with its own 5 s bound). Ordering of
// waiters inside one process is the caller's job: this guards across
// processes. Because the caller serialises its own turns of a session, a
// lease found held by the caller's own Host is a leftover (a release that
// failed) and is taken over rather than waited on forever.
func (db *DB) AcquireSessionLease(ctx context.Context, sessionID, holder, hostID string) (release func(context.Context) error, err error) {
	if _, err := db.AcquireSessionLeaseWith(ctx, sessionID, holder, hostID, nil); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := db.ReleaseSessionLeaseWith(ctx, sessionID, holder, hostID, nil)
		return err
	}, nil
}

// AcquireSessionLeaseWith is AcquireSessionLease that appends then, as
// AppendBatches would, in the transaction that takes the lease: a turn's
// first events are written exactly when it is admitted. A failing batch
// fails the acquisition and leaves the lease as it was. It returns the
// stored events of each batch; the caller releases the lease with
// ReleaseSessionLeaseWith.
func (db *DB) AcquireSessionLeaseWith(ctx context.Context, sessionID, holder, hostID string, then []demiurge.EventBatch) ([][]demiurge.Event, error) {
	if sessionID == "" || holder == "" || hostID == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "session lease requires session_id, holder and host_id")
	}
	delay := leasePollStart
	for {
		ok, stored, err := db.tryLease(ctx, sessionID, holder, hostID, then)
		if err != nil {
			return nil, err
		}
		if ok {
			return stored, nil
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctxError(ctx, "wait for session lease "+sessionID)
		case <-timer.C:
		}
		delay = min(delay*2, leasePollMax)
	}
}

// ReleaseSessionLeaseWith appends first, as AppendBatches would, and
// deletes the lease if it is still holder's, in ONE transaction: a turn's
// last events and the end of its admission commit together. A failing
// batch fails the call and the lease stays held. It runs even when ctx is
// already cancelled (with its own 5 s bound).
func (db *DB) ReleaseSessionLeaseWith(ctx context.Context, sessionID, holder, hostID string, first []demiurge.EventBatch) ([][]demiurge.Event, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var stored [][]demiurge.Event
	err := db.write(rctx, func(t *wtx) error {
		var err error
		if stored, err = t.appendBatches(first); err != nil {
			return err
		}
		_, err = t.exec(sqlLeaseRelease, sessionID, holder, hostID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return stored, nil
}

// tryLease makes one attempt, appending then when it takes the lease. A
// cheap read on the reader pool first skips the write lock while a live
// holder keeps the lease.
func (db *DB) tryLease(ctx context.Context, sessionID, holder, hostID string, then []demiurge.EventBatch) (bool, [][]demiurge.Event, error) {
	var curHolder, curHost string
	err := db.reader.QueryRowContext(ctx, sqlLeaseGet, sessionID).Scan(&curHolder, &curHost)
	switch {
	case isNoRows(err):
	case err != nil:
		return false, nil, db.codeError(ctx, err)
	case curHolder == holder && curHost == hostID && len(then) == 0:
		return true, nil, nil
	case curHost == hostID:
		// A leftover of this Host: fall through to the takeover below.
	default:
		h, err := scanHost(db.reader.QueryRowContext(ctx, `SELECT host_id, pid, start_marker, hostname, expires_at, stopped_at
  FROM hosts WHERE host_id = ?`, curHost))
		if err != nil && !isNoRows(err) {
			return false, nil, db.codeError(ctx, err)
		}
		if err == nil && db.hostAlive(h, db.now().UTC()) {
			return false, nil, nil
		}
	}

	acquired := false
	var stored [][]demiurge.Event
	err = db.write(ctx, func(t *wtx) error {
		acquired, stored = false, nil
		var err error
		if acquired, err = t.takeLease(sessionID, holder, hostID); err != nil || !acquired {
			return err
		}
		stored, err = t.appendBatches(then)
		return err
	})
	return acquired, stored, err
}

// takeLease takes the lease inside a write transaction when it is free,
// already holder's, or held by a gone Host.
func (t *wtx) takeLease(sessionID, holder, hostID string) (bool, error) {
	var curHolder, curHost string
	err := t.queryRow(sqlLeaseGet, sessionID).Scan(&curHolder, &curHost)
	if isNoRows(err) {
		if _, err := t.exec(sqlLeaseInsert, sessionID, holder, hostID, t.nowText()); err != nil {
			return false, err
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if curHolder == holder && curHost == hostID {
		return true, nil
	}
	if curHost != hostID {
		alive, err := t.hostAliveByID(curHost)
		if err != nil || alive {
			return false, err
		}
	}
	res, err := t.exec(sqlLeaseTakeOver, holder, hostID, t.nowText(), sessionID, curHolder, curHost)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if n == 1 {
		t.db.log.Info("runtime store: took over session lease of a gone host",
			"session_id", sessionID, "old_holder", curHolder, "old_host_id", curHost)
	}
	return n == 1, nil
}
