package store

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

const workSelect = `SELECT work_id, kind, status, owner_session_id, owner_turn_id, parent_work_id, claim_id, owner_id,
  claimed_at, lease_expires_at, attempts, next_attempt_at, last_error, external_ref, payload_json, created_at,
  updated_at, completed_at FROM runtime_work_items`

var sqlWorkByID = workSelect + ` WHERE work_id = ?`

// EnqueueWork appends work.enqueued for item with
// idempotency key idempotencyKey, or "work:<id>:enqueued" when empty, and
// returns the stored row. item.ID and item.Kind are required.
func (db *DB) EnqueueWork(ctx context.Context, item demiurge.WorkItem, idempotencyKey string) (demiurge.WorkItem, error) {
	if item.ID == "" || item.Kind == "" {
		return demiurge.WorkItem{}, demiurge.Errorf(demiurge.EINVALID, "work item requires an id and a kind")
	}
	if idempotencyKey == "" {
		idempotencyKey = "work:" + item.ID + ":enqueued"
	}
	p := demiurge.WorkEnqueuedPayload{Kind: item.Kind, Status: item.Status, OwnerSessionID: item.OwnerSessionID,
		OwnerTurnID: item.OwnerTurnID, ParentWorkID: item.ParentWorkID, ExternalRef: item.ExternalRef}
	if item.Payload != nil {
		p.Payload = item.Payload
	}
	if !item.NextAttemptAt.IsZero() {
		p.NextAttemptAt = demiurge.FormatTime(item.NextAttemptAt)
	}
	var out demiurge.WorkItem
	err := db.write(ctx, func(t *wtx) error {
		ev := demiurge.NewEvent(demiurge.AggWork, item.ID, p)
		if _, err := t.append([]demiurge.Event{ev}, idempotencyKey, nil); err != nil {
			return err
		}
		var ok bool
		var err error
		out, ok, err = t.workItem(item.ID)
		if err == nil && !ok {
			err = workNotFound(item.ID)
		}
		return err
	})
	return out, err
}

// WorkItem returns one durable work item; ENOTFOUND "work item not found: <id>".
func (db *DB) WorkItem(ctx context.Context, id string) (demiurge.WorkItem, error) {
	w, err := scanWork(db.reader.QueryRowContext(ctx, sqlWorkByID, id))
	if isNoRows(err) {
		return w, workNotFound(id)
	}
	return w, db.codeError(ctx, err)
}

func workNotFound(id string) error {
	return demiurge.Errorf(demiurge.ENOTFOUND, "work item not found: %s", id)
}

func (t *wtx) workItem(id string) (demiurge.WorkItem, bool, error) {
	w, err := scanWork(t.queryRow(sqlWorkByID, id))
	if isNoRows(err) {
		return w, false, nil
	}
	return w, err == nil, err
}

func scanWork(r scanner) (demiurge.WorkItem, error) {
	var w demiurge.WorkItem
	var session, turn, parent, claim, owner, claimed, lease, next, lastErr, ext, completed ns
	var body, created, updated string
	if err := r.Scan(&w.ID, &w.Kind, &w.Status, &session, &turn, &parent, &claim, &owner, &claimed, &lease, &w.Attempts,
		&next, &lastErr, &ext, &body, &created, &updated, &completed); err != nil {
		return w, err
	}
	w.OwnerSessionID, w.OwnerTurnID, w.ParentWorkID = session.String, turn.String, parent.String
	w.ClaimID, w.OwnerID, w.LastError, w.ExternalRef = claim.String, owner.String, lastErr.String, ext.String
	w.ClaimedAt, w.LeaseExpiresAt, w.NextAttemptAt = parseTime(claimed), parseTime(lease), parseTime(next)
	w.Payload = objectOrCorrupt(body)
	w.CreatedAt, w.UpdatedAt, w.CompletedAt = demiurge.ParseTime(created), demiurge.ParseTime(updated), parseTime(completed)
	return w, nil
}

// leaseLive reports whether a claim's lease is still running at now.
func leaseLive(w demiurge.WorkItem, now time.Time) bool {
	return !w.LeaseExpiresAt.IsZero() && w.LeaseExpiresAt.After(now)
}

// ClaimWork claims one work item for ownerID with a lease (default
// demiurge.DefaultWorkLease). ok is false, with no error, when the item is
// missing, final (terminal or unknown), in sending (whatever its lease), or
// claimed/running under a live lease. A claim gets a new claim_… id, status
// claimed and attempts+1, recorded as event work.claimed.
//
// An item in sending may already have reached the outside world; claiming it
// again would send it twice. Only RecoverWork moves it on, to unknown.
func (db *DB) ClaimWork(ctx context.Context, workID, ownerID string, lease time.Duration) (demiurge.WorkItem, bool, error) {
	var out demiurge.WorkItem
	var ok bool
	err := db.write(ctx, func(t *wtx) error {
		w, found, err := t.workItem(workID)
		if err != nil || !found || !claimable(w, t.now) {
			return err
		}
		out, err = t.claim(w, ownerID, lease)
		ok = err == nil
		return err
	})
	return out, ok, err
}

// claimable reports whether ClaimWork may claim w at now: it is open, not
// in sending, and any claim on it has lapsed.
func claimable(w demiurge.WorkItem, now time.Time) bool {
	switch {
	case !workOverwritable(w.Status), w.Status == demiurge.WorkSending:
		return false
	case w.Status == demiurge.WorkClaimed, w.Status == demiurge.WorkRunning:
		return !leaseLive(w, now)
	}
	return true
}

// ClaimDueWork claims up to limit (default 1, at most 100) due work items of
// kind ("" for any kind), oldest first: status queued or retry_scheduled, or
// claimed/running whose lease has expired, and next_attempt_at unset or
// passed. Items in sending are never re-claimed (they become unknown).
func (db *DB) ClaimDueWork(ctx context.Context, kind, ownerID string, lease time.Duration, limit int) ([]demiurge.WorkItem, error) {
	limit = clampLimit(limit, 1, 100)
	// Most polls find nothing due: a read answers those without taking the
	// write lock or committing. What the read misses, the next poll claims.
	if due, err := db.anyDueWork(ctx, kind); err != nil || !due {
		return nil, err
	}
	var out []demiurge.WorkItem
	err := db.write(ctx, func(t *wtx) error {
		out = nil
		q, args := claimDueQuery(kind, t.nowText(), limit)
		rows, err := t.query(q, args...)
		if err != nil {
			return err
		}
		var due []demiurge.WorkItem
		for rows.Next() {
			w, err := scanWork(rows)
			if err != nil {
				rows.Close()
				return err
			}
			due = append(due, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, w := range due {
			c, err := t.claim(w, ownerID, lease)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// anyDueWork reports whether ClaimDueWork would find something to claim.
func (db *DB) anyDueWork(ctx context.Context, kind string) (bool, error) {
	q, args := claimDueQuery(kind, demiurge.FormatTime(db.now().UTC()), 1)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return false, db.codeError(ctx, err)
	}
	defer rows.Close()
	due := rows.Next()
	return due, db.codeError(ctx, rows.Err())
}

// claimDueQuery selects due work. Its candidates come from an index on the
// open statuses, so the cost follows the backlog, not the history.
func claimDueQuery(kind, now string, limit int) (string, []any) {
	q := workSelect + ` WHERE status IN ('queued', 'retry_scheduled', 'claimed', 'running')
  AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
  AND (status IN ('queued', 'retry_scheduled') OR lease_expires_at IS NULL OR lease_expires_at <= ?)`
	args := []any{now, now}
	if kind != "" {
		q += ` AND kind = ?`
		args = append(args, kind)
	}
	return q + ` ORDER BY created_at, rowid LIMIT ?`, append(args, limit)
}

func (t *wtx) claim(w demiurge.WorkItem, ownerID string, lease time.Duration) (demiurge.WorkItem, error) {
	if lease <= 0 {
		lease = demiurge.DefaultWorkLease
	}
	attempts := w.Attempts + 1
	ev := demiurge.NewEvent(demiurge.AggWork, w.ID, demiurge.WorkClaimedPayload{
		Status:         demiurge.WorkClaimed,
		ClaimID:        demiurge.NewID("claim"),
		OwnerID:        ownerID,
		ClaimedAt:      t.nowText(),
		LeaseExpiresAt: demiurge.FormatTime(t.now.Add(lease)),
		Attempts:       &attempts,
	})
	if _, err := t.append([]demiurge.Event{ev}, "", nil); err != nil {
		return w, err
	}
	c, _, err := t.workItem(w.ID)
	return c, err
}

// workTransitions maps TransitionWork's target statuses to event types.
var workTransitions = map[string]string{
	demiurge.WorkRunning:        demiurge.EvWorkRunning,
	demiurge.WorkSending:        demiurge.EvWorkSending,
	demiurge.WorkHeartbeat:      demiurge.EvWorkHeartbeat,
	demiurge.WorkSucceeded:      demiurge.EvWorkSucceeded,
	demiurge.WorkFailed:         demiurge.EvWorkFailed,
	demiurge.WorkRetryScheduled: demiurge.EvWorkFailed,
	demiurge.WorkCancelled:      demiurge.EvWorkCancelled,
	demiurge.WorkUnknown:        demiurge.EvWorkUnknown,
	demiurge.WorkAcknowledged:   demiurge.EvWorkAcknowledged,
}

// TransitionWork moves a claimed work item to toStatus (running, sending,
// heartbeat, succeeded, failed, retry_scheduled, cancelled, unknown,
// acknowledged) and appends the matching work.* event in the same
// transaction. It fails with
//   - ENOTFOUND "work item not found: <id>" when the item is missing,
//   - ECONFLICT "stale durable claim for work <id>" when claimID is not the
//     item's current claim,
//   - ECONFLICT "durable work cannot be overwritten: <id>" when the item is
//     terminal or unknown,
//   - EINVALID for an unsupported toStatus.
//
// failed with fields.RetryAt set (or retry_scheduled) releases the claim and
// schedules the next attempt.
func (db *DB) TransitionWork(ctx context.Context, workID, claimID, toStatus string, fields demiurge.WorkFields) (demiurge.WorkItem, error) {
	evType, ok := workTransitions[toStatus]
	if !ok {
		return demiurge.WorkItem{}, demiurge.Errorf(demiurge.EINVALID, "unsupported durable work transition: %s", toStatus)
	}
	var out demiurge.WorkItem
	err := db.write(ctx, func(t *wtx) error {
		w, found, err := t.workItem(workID)
		if err != nil {
			return err
		}
		if !found {
			return workNotFound(workID)
		}
		if w.ClaimID == "" || w.ClaimID != claimID {
			return demiurge.Errorf(demiurge.ECONFLICT, "stale durable claim for work %s", workID)
		}
		if !workOverwritable(w.Status) {
			return demiurge.Errorf(demiurge.ECONFLICT, "durable work cannot be overwritten: %s", workID)
		}
		c := demiurge.WorkChange{ExternalRef: fields.ExternalRef, LastError: fields.LastError}
		status := toStatus
		if toStatus == demiurge.WorkFailed && !fields.RetryAt.IsZero() {
			status = demiurge.WorkRetryScheduled
		}
		switch status {
		case demiurge.WorkHeartbeat:
			lease := fields.Lease
			if lease <= 0 {
				lease = demiurge.DefaultWorkLease
			}
			c.LeaseExpiresAt = demiurge.FormatTime(t.now.Add(lease))
		case demiurge.WorkRetryScheduled:
			c.ClearClaim = true
			if !fields.RetryAt.IsZero() {
				c.NextAttemptAt = demiurge.FormatTime(fields.RetryAt)
			}
		}
		if status != demiurge.WorkHeartbeat {
			c.Status = status
			if fields.Lease > 0 {
				c.LeaseExpiresAt = demiurge.FormatTime(t.now.Add(fields.Lease))
			}
		}
		ev, err := workEvent(workID, evType, c)
		if err != nil {
			return err
		}
		if _, err := t.append([]demiurge.Event{ev}, "", nil); err != nil {
			return err
		}
		out, _, err = t.workItem(workID)
		return err
	})
	return out, err
}
