package store

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

const deliverySelect = `SELECT delivery_id, owner_turn_id, channel, target_json, status, idempotency_key, payload_json,
  attempts, last_error, created_at, sent_at FROM outbox`

// Delivery returns one outbox row; ENOTFOUND "delivery not found: <id>".
func (db *DB) Delivery(ctx context.Context, id string) (demiurge.Delivery, error) {
	d, err := scanDelivery(db.reader.QueryRowContext(ctx, sqlDeliveryByID, id))
	if isNoRows(err) {
		return d, deliveryNotFound(id)
	}
	return d, db.codeError(ctx, err)
}

// Deliveries returns outbox rows newest first: in reverse order of queueing
// (rowid DESC; an outbox row is written once, by delivery.queued).
func (db *DB) Deliveries(ctx context.Context, f demiurge.DeliveryFilter) ([]demiurge.Delivery, error) {
	q, args := deliveriesQuery(f)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, db.codeError(ctx, err)
		}
		out = append(out, d)
	}
	return out, db.codeError(ctx, rows.Err())
}

func deliveriesQuery(f demiurge.DeliveryFilter) (string, []any) {
	var where []string
	var args []any
	if f.TurnID != "" {
		where = append(where, "owner_turn_id = ?")
		args = append(args, f.TurnID)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	q := deliverySelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY rowid DESC LIMIT ?"
	return q, append(args, clampLimit(f.Limit, demiurge.DefaultDeliveryLimit, demiurge.MaxDeliveryLimit))
}

func scanDelivery(r scanner) (demiurge.Delivery, error) {
	var d demiurge.Delivery
	var turn, channel, key, lastErr, sent ns
	var target, body, created string
	if err := r.Scan(&d.ID, &turn, &channel, &target, &d.Status, &key, &body, &d.Attempts, &lastErr, &created, &sent); err != nil {
		return d, err
	}
	d.OwnerTurnID, d.Channel, d.IdempotencyKey, d.LastError = turn.String, channel.String, key.String, lastErr.String
	d.Target, d.Payload = objectOrCorrupt(target), objectOrCorrupt(body)
	d.CreatedAt, d.SentAt = demiurge.ParseTime(created), parseTime(sent)
	return d, nil
}

var sqlDeliveryByID = prep(deliverySelect + ` WHERE delivery_id = ?`)

// delivery reads one outbox row inside a write transaction.
func (t *wtx) delivery(id string) (demiurge.Delivery, error) {
	d, err := scanDelivery(t.queryRow(sqlDeliveryByID, id))
	if isNoRows(err) {
		return d, deliveryNotFound(id)
	}
	return d, err
}

func deliveryNotFound(id string) error {
	return demiurge.Errorf(demiurge.ENOTFOUND, "delivery not found: %s", id)
}

// StartDeliverySend moves delivery deliveryID from queued to sending in ONE
// transaction: its delivery.send work item is claimed for ownerID (lease
// from now) and moved to sending (one work.sending event carrying the
// claim), and delivery.sending {attempts, host_id} is appended. The caller
// calls the route only after this returns started=true, so a crash during
// the send leaves both rows in sending, which restart reconciliation turns
// into unknown: the delivery is never started twice.
//
// claimID selects who may start it:
//   - "" (a direct dispatch): the work item must be queued (whatever its
//     next_attempt_at: the window after Enqueue belongs to the enqueuer),
//     retry_scheduled and due, or claimed/running under an expired lease.
//     A missing work item is enqueued first.
//   - a claim of ClaimDueWork: the work item must still hold exactly that
//     claim, in status claimed. If the outbox row is no longer queued, the
//     work item is ended to match it (sent/unrouted → succeeded, failed →
//     failed, unknown or sending → unknown: never started again) and
//     started is false.
//
// started=false with no error means nothing was started (the returned rows
// say why: another status, a live claim, a retry not yet due). hostID, when
// not empty, is stamped on the outbox row for Reconcile.
//
// Errors: ENOTFOUND "delivery not found: <id>" (a work item claimed with
// claimID is then ended failed, as it can never be sent), store errors.
func (db *DB) StartDeliverySend(ctx context.Context, deliveryID, claimID, ownerID, hostID string, lease time.Duration) (d demiurge.Delivery, w demiurge.WorkItem, started bool, err error) {
	if lease <= 0 {
		lease = demiurge.DefaultWorkLease
	}
	var missing error
	err = db.write(ctx, func(t *wtx) error {
		started, missing = false, nil
		var err error
		var found bool
		if w, found, err = t.workItem(deliveryID); err != nil {
			return err
		}
		if d, err = t.delivery(deliveryID); err != nil {
			if demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
				return err
			}
			// A claimed work item without its outbox row can never be
			// sent: end it, so that it is not claimed again and again.
			missing = err
			if claimID != "" && found && w.ClaimID == claimID && w.Status == demiurge.WorkClaimed {
				_, err = t.append([]demiurge.Event{workEvent(deliveryID, demiurge.EvWorkFailed, map[string]any{
					"status": demiurge.WorkFailed, "last_error": missing.Error()})}, "", nil)
				return err
			}
			return nil
		}
		claim := map[string]any{}
		switch {
		case claimID != "":
			if !found || w.ClaimID != claimID || w.Status != demiurge.WorkClaimed {
				return nil
			}
			if d.Status != demiurge.DeliveryQueued {
				w, err = t.settleDeliveryWork(d, w)
				return err
			}
			claim["attempts"] = w.Attempts
		case d.Status != demiurge.DeliveryQueued:
			return nil
		default:
			if !found {
				if w, err = t.enqueueDeliveryWork(d); err != nil {
					return err
				}
			}
			if !directlyStartable(w, t.now) {
				return nil
			}
			claim["claim_id"] = demiurge.NewID("claim")
			claim["owner_id"] = ownerID
			claim["claimed_at"] = t.nowText()
			claim["attempts"] = w.Attempts + 1
		}
		claim["status"] = demiurge.WorkSending
		claim["lease_expires_at"] = demiurge.FormatTime(t.now.Add(lease))
		sending := map[string]any{"status": demiurge.DeliverySending, "attempts": claim["attempts"]}
		if hostID != "" {
			sending["host_id"] = hostID
		}
		if _, err := t.append([]demiurge.Event{
			workEvent(deliveryID, demiurge.EvWorkSending, claim),
			{AggregateType: demiurge.AggDelivery, AggregateID: deliveryID, Type: demiurge.EvDeliverySending, Payload: sending},
		}, "", nil); err != nil {
			return err
		}
		if d, err = t.delivery(deliveryID); err != nil {
			return err
		}
		w, _, err = t.workItem(deliveryID)
		started = err == nil
		return err
	})
	if err == nil && missing != nil {
		err = missing
	}
	return d, w, started, err
}

// directlyStartable reports whether a dispatch without a claim may start
// work item w at now.
func directlyStartable(w demiurge.WorkItem, now time.Time) bool {
	switch w.Status {
	case demiurge.WorkQueued:
		return true
	case demiurge.WorkRetryScheduled:
		return w.NextAttemptAt.IsZero() || !w.NextAttemptAt.After(now)
	case demiurge.WorkClaimed, demiurge.WorkRunning:
		return !leaseLive(w, now)
	}
	return false
}

// enqueueDeliveryWork writes the missing delivery.send work item of d.
func (t *wtx) enqueueDeliveryWork(d demiurge.Delivery) (demiurge.WorkItem, error) {
	p := map[string]any{"kind": demiurge.WorkKindDeliverySend, "status": demiurge.WorkQueued,
		"payload": map[string]any{"delivery_id": d.ID, "message_id": d.Payload["message_id"]}}
	if d.OwnerTurnID != "" {
		p["owner_turn_id"] = d.OwnerTurnID
	}
	if s, _ := d.Payload["session_id"].(string); s != "" {
		p["owner_session_id"] = s
	}
	if _, err := t.append([]demiurge.Event{workEvent(d.ID, demiurge.EvWorkEnqueued, p)}, "work:"+d.ID+":enqueued", nil); err != nil {
		return demiurge.WorkItem{}, err
	}
	w, _, err := t.workItem(d.ID)
	return w, err
}

// settleDeliveryWork ends a claimed delivery.send work item whose outbox
// row has moved on without it, so that it is not claimed forever.
func (t *wtx) settleDeliveryWork(d demiurge.Delivery, w demiurge.WorkItem) (demiurge.WorkItem, error) {
	typ, p := demiurge.EvWorkUnknown, map[string]any{"status": demiurge.WorkUnknown, "clear_claim": true}
	switch d.Status {
	case demiurge.DeliverySent, demiurge.DeliveryUnrouted:
		typ, p = demiurge.EvWorkSucceeded, map[string]any{"status": demiurge.WorkSucceeded}
	case demiurge.DeliveryFailed:
		typ, p = demiurge.EvWorkFailed, map[string]any{"status": demiurge.WorkFailed}
	}
	lastErr := d.LastError
	if lastErr == "" {
		lastErr = "outbox row is " + d.Status
	}
	p["last_error"] = lastErr
	if _, err := t.append([]demiurge.Event{workEvent(w.ID, typ, p)}, "", nil); err != nil {
		return w, err
	}
	out, _, err := t.workItem(w.ID)
	return out, err
}

// FinishDeliverySend records the outcome of a send StartDeliverySend began,
// in ONE transaction: the work item and the outbox row move together.
//
//	status     work item                        outbox event
//	sent       succeeded                        delivery.sent (sent_at)
//	unrouted   succeeded                        delivery.unrouted {last_error}
//	failed     failed {last_error}              delivery.failed {last_error, message_id?, failure_text?}
//	unknown    unknown (claim cleared)          delivery.unknown {last_error}
//	queued     retry_scheduled at retryAt       delivery.retry_scheduled {status queued, last_error,
//	           (claim cleared)                    next_attempt_at}: the row is queued again
//
// A failed delivery that wrote a history message names it (message_id) so
// that the projection annotates that message's metadata; its text is never
// rewritten (see project_delivery.go).
//
// Errors: ENOTFOUND for a missing delivery or work item; ECONFLICT "stale
// durable claim for work <id>" when the work item no longer holds claimID
// in sending (reconciliation may have made it unknown meanwhile), and
// "delivery <id> is <status>, not sending" when the outbox row moved on;
// EINVALID for another status or a retry without retryAt.
func (db *DB) FinishDeliverySend(ctx context.Context, deliveryID, claimID, status, lastError string, retryAt time.Time) (demiurge.Delivery, error) {
	var d demiurge.Delivery
	err := db.write(ctx, func(t *wtx) error {
		var err error
		if d, err = t.delivery(deliveryID); err != nil {
			return err
		}
		w, found, err := t.workItem(deliveryID)
		switch {
		case err != nil:
			return err
		case !found:
			return workNotFound(deliveryID)
		case claimID == "" || w.ClaimID != claimID || w.Status != demiurge.WorkSending:
			return demiurge.Errorf(demiurge.ECONFLICT, "stale durable claim for work %s", deliveryID)
		case d.Status != demiurge.DeliverySending:
			return demiurge.Errorf(demiurge.ECONFLICT, "delivery %s is %s, not sending", deliveryID, d.Status)
		}
		evs, err := finishEvents(d, status, lastError, retryAt)
		if err != nil {
			return err
		}
		if _, err := t.append(evs, "", nil); err != nil {
			return err
		}
		d, err = t.delivery(deliveryID)
		return err
	})
	return d, err
}

// finishEvents builds the work and outbox events of FinishDeliverySend.
func finishEvents(d demiurge.Delivery, status, lastError string, retryAt time.Time) ([]demiurge.Event, error) {
	work := map[string]any{}
	out := map[string]any{"status": status, "attempts": d.Attempts}
	if lastError != "" {
		work["last_error"] = lastError
		out["last_error"] = lastError
	}
	var workType, outType string
	switch status {
	case demiurge.DeliverySent:
		workType, outType = demiurge.EvWorkSucceeded, demiurge.EvDeliverySent
		work["status"] = demiurge.WorkSucceeded
	case demiurge.DeliveryUnrouted:
		workType, outType = demiurge.EvWorkSucceeded, demiurge.EvDeliveryUnrouted
		work["status"] = demiurge.WorkSucceeded
	case demiurge.DeliveryFailed:
		workType, outType = demiurge.EvWorkFailed, demiurge.EvDeliveryFailed
		work["status"] = demiurge.WorkFailed
		if m, _ := d.Payload["message_id"].(string); m != "" {
			out["message_id"] = m
			// The failure text is recorded beside the body, never over it.
			body, _ := d.Payload["history_text"].(string)
			if f, _ := d.Payload["failure_history_text"].(string); f != "" && f != body {
				out["failure_text"] = f
			}
		}
	case demiurge.DeliveryUnknown:
		workType, outType = demiurge.EvWorkUnknown, demiurge.EvDeliveryUnknown
		work["status"], work["clear_claim"] = demiurge.WorkUnknown, true
	case demiurge.DeliveryQueued:
		if retryAt.IsZero() {
			return nil, demiurge.Errorf(demiurge.EINVALID, "delivery %s: a retry needs a next attempt time", d.ID)
		}
		workType, outType = demiurge.EvWorkFailed, demiurge.EvDeliveryRetryScheduled
		next := demiurge.FormatTime(retryAt)
		work["status"], work["clear_claim"], work["next_attempt_at"] = demiurge.WorkRetryScheduled, true, next
		out["next_attempt_at"] = next
	default:
		return nil, demiurge.Errorf(demiurge.EINVALID, "unsupported delivery outcome: %s", status)
	}
	return []demiurge.Event{
		workEvent(d.ID, workType, work),
		{AggregateType: demiurge.AggDelivery, AggregateID: d.ID, Type: outType, Payload: out},
	}, nil
}
