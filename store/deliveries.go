package store

import (
	"cmp"
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
	d.Target, d.Payload = objectOrCorrupt(target), demiurge.ExpandDeliveryBody(objectOrCorrupt(body))
	d.CreatedAt, d.SentAt = demiurge.ParseTime(created), parseTime(sent)
	return d, nil
}

var sqlDeliveryByID = deliverySelect + ` WHERE delivery_id = ?`

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
				_, err = t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggWork, deliveryID, demiurge.WorkFailedPayload{
					Status: demiurge.WorkFailed, LastError: missing.Error()})}, "", nil)
				return err
			}
			return nil
		}
		var claim demiurge.WorkSendingPayload
		switch {
		case claimID != "":
			if !found || w.ClaimID != claimID || w.Status != demiurge.WorkClaimed {
				return nil
			}
			if d.Status != demiurge.DeliveryQueued {
				w, err = t.settleDeliveryWork(d, w)
				return err
			}
			claim.Attempts = &w.Attempts
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
			attempts := w.Attempts + 1
			claim.ClaimID, claim.OwnerID, claim.ClaimedAt, claim.Attempts = demiurge.NewID("claim"), ownerID, t.nowText(), &attempts
		}
		claim.Status = demiurge.WorkSending
		claim.LeaseExpiresAt = demiurge.FormatTime(t.now.Add(lease))
		sending := demiurge.DeliverySendingPayload{Status: demiurge.DeliverySending, Attempts: claim.Attempts, HostID: hostID}
		if _, err := t.append([]demiurge.Event{
			demiurge.NewEvent(demiurge.AggWork, deliveryID, claim),
			demiurge.NewEvent(demiurge.AggDelivery, deliveryID, sending),
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
	session, _ := d.Payload["session_id"].(string)
	p := demiurge.WorkEnqueuedPayload{Kind: demiurge.WorkKindDeliverySend, Status: demiurge.WorkQueued,
		OwnerTurnID: d.OwnerTurnID, OwnerSessionID: session,
		Payload: map[string]any{"delivery_id": d.ID, "message_id": d.Payload["message_id"]}}
	if _, err := t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggWork, d.ID, p)}, "work:"+d.ID+":enqueued", nil); err != nil {
		return demiurge.WorkItem{}, err
	}
	w, _, err := t.workItem(d.ID)
	return w, err
}

// settleDeliveryWork ends a claimed delivery.send work item whose outbox
// row has moved on without it, so that it is not claimed forever.
func (t *wtx) settleDeliveryWork(d demiurge.Delivery, w demiurge.WorkItem) (demiurge.WorkItem, error) {
	typ, c := demiurge.EvWorkUnknown, demiurge.WorkChange{Status: demiurge.WorkUnknown, ClearClaim: true}
	switch d.Status {
	case demiurge.DeliverySent, demiurge.DeliveryUnrouted:
		typ, c = demiurge.EvWorkSucceeded, demiurge.WorkChange{Status: demiurge.WorkSucceeded}
	case demiurge.DeliveryFailed:
		typ, c = demiurge.EvWorkFailed, demiurge.WorkChange{Status: demiurge.WorkFailed}
	}
	c.LastError = cmp.Or(d.LastError, "outbox row is "+d.Status)
	ev, err := workEvent(w.ID, typ, c)
	if err != nil {
		return w, err
	}
	if _, err := t.append([]demiurge.Event{ev}, "", nil); err != nil {
		return w, err
	}
	out, _, err := t.workItem(w.ID)
	return out, err
}

// FinishDeliverySend records the outcome of a send StartDeliverySend began,
// in ONE transaction: the work item and the outbox row move together, by
// the events of demiurge.DeliveryOutcomeEvents (see project_delivery.go for
// how a failure annotates the history message).
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
		evs, err := demiurge.DeliveryOutcomeEvents(d, status, lastError, retryAt)
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
