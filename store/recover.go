package store

import (
	"cmp"
	"context"

	"github.com/demiurge/demiurge"
)

// WorkRecovery counts what RecoverWork found (spec host-runtime §1.8).
type WorkRecovery struct {
	Recovered         int // claimed/running with an expired lease → retry_scheduled (work.recovered)
	Deferred          int // other non-terminal items, left alone
	Unknown           int // items now unknown, including ones that already were
	MarkedUnknown     int // items this recovery moved from sending to unknown (work.unknown)
	Corrupt           int // undecodable payload_json → corrupt (work.corrupt)
	DeliveriesUnknown int // outbox rows marked unknown because their delivery.send work is unknown
}

// sqlRecoverCandidates reads the open work items through
// idx_runtime_work_status: recovery cost follows the backlog, not history.
const sqlRecoverCandidates = `SELECT work_id, status, claim_id, lease_expires_at, last_error, payload_json
  FROM runtime_work_items WHERE status IN ('queued', 'retry_scheduled', 'claimed', 'running', 'sending', 'unknown')`

// Last errors written by recovery.
const (
	errExpiredWhileSending = "expired while sending"
	errExpiredClaim        = "expired claim recovered"
	errCorruptPayload      = "corrupt payload_json"
)

// RecoverWork recovers durable work after a restart, through events only:
//   - payload_json that does not decode → work.corrupt;
//   - sending with an expired lease → work.unknown (claim cleared, last_error
//     "expired while sending"): it is never sent again;
//   - claimed/running with an expired lease → work.recovered, status
//     retry_scheduled (claim cleared, last_error kept or "expired claim
//     recovered");
//   - every unknown delivery.send item whose outbox row is not yet unknown →
//     delivery.unknown with the work's last_error.
//
// Items under a live lease are not touched, so a live Host's work is safe.
// Each event carries an idempotency key naming the claim it ends, and state
// is re-read inside the transaction, so concurrent recoveries append once.
func (db *DB) RecoverWork(ctx context.Context) (WorkRecovery, error) {
	var rep WorkRecovery
	err := db.write(ctx, func(t *wtx) error {
		var err error
		rep, err = t.recoverWork()
		return err
	})
	return rep, err
}

func (t *wtx) recoverWork() (WorkRecovery, error) {
	var rep WorkRecovery
	rows, err := t.query(sqlRecoverCandidates)
	if err != nil {
		return rep, err
	}
	type item struct {
		id, status, claim, lastErr, body string
		lease                            ns
	}
	var items []item
	for rows.Next() {
		var it item
		var claim, lastErr ns
		if err := rows.Scan(&it.id, &it.status, &claim, &it.lease, &lastErr, &it.body); err != nil {
			rows.Close()
			return rep, err
		}
		it.claim, it.lastErr = claim.String, lastErr.String
		items = append(items, it)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, err
	}

	now := t.nowText()
	for _, it := range items {
		expired := !it.lease.Valid || it.lease.String <= now
		var ev demiurge.Event
		var key string
		switch {
		case it.status == demiurge.WorkUnknown:
			rep.Unknown++
			continue
		case !validObject(it.body):
			rep.Corrupt++
			key = "work:" + it.id + ":corrupt"
			ev = demiurge.NewEvent(demiurge.AggWork, it.id, demiurge.WorkCorruptPayload{
				Status: demiurge.WorkCorrupt, LastError: errCorruptPayload, ClearClaim: true})
		case it.status == demiurge.WorkSending && expired:
			rep.Unknown++
			rep.MarkedUnknown++
			key = "work:" + it.id + ":unknown:" + it.claim
			ev = demiurge.NewEvent(demiurge.AggWork, it.id, demiurge.WorkUnknownPayload{
				Status: demiurge.WorkUnknown, LastError: errExpiredWhileSending, ClearClaim: true})
		case (it.status == demiurge.WorkClaimed || it.status == demiurge.WorkRunning) && expired:
			rep.Recovered++
			key = "work:" + it.id + ":recovered:" + it.claim
			ev = demiurge.NewEvent(demiurge.AggWork, it.id, demiurge.WorkRecoveredPayload{
				Status: demiurge.WorkRetryScheduled, LastError: cmp.Or(it.lastErr, errExpiredClaim), ClearClaim: true})
		default:
			rep.Deferred++
			continue
		}
		if _, err := t.append([]demiurge.Event{ev}, key, nil); err != nil {
			return rep, err
		}
	}

	n, err := t.unknownDeliveries()
	rep.DeliveriesUnknown = n
	return rep, err
}

// unknownDeliveries appends delivery.unknown for every delivery.send work
// item that is unknown while its outbox row is not.
func (t *wtx) unknownDeliveries() (int, error) {
	rows, err := t.query(`SELECT w.work_id, w.last_error FROM runtime_work_items w
  JOIN outbox o ON o.delivery_id = w.work_id
  WHERE w.status = 'unknown' AND w.kind = ? AND o.status != 'unknown'`, demiurge.WorkKindDeliverySend)
	if err != nil {
		return 0, err
	}
	type row struct{ id, lastErr string }
	var todo []row
	for rows.Next() {
		var r row
		var lastErr ns
		if err := rows.Scan(&r.id, &lastErr); err != nil {
			rows.Close()
			return 0, err
		}
		r.lastErr = lastErr.String
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, r := range todo {
		ev := demiurge.NewEvent(demiurge.AggDelivery, r.id, demiurge.DeliveryUnknownPayload{
			Status: demiurge.DeliveryUnknown, LastError: r.lastErr})
		if _, err := t.append([]demiurge.Event{ev}, "delivery:"+r.id+":unknown", nil); err != nil {
			return 0, err
		}
	}
	return len(todo), nil
}

// workEvent is the work item transition typ of work id.
func workEvent(id, typ string, c demiurge.WorkChange) (demiurge.Event, error) {
	p, err := c.As(typ)
	if err != nil {
		return demiurge.Event{}, err
	}
	return demiurge.NewEvent(demiurge.AggWork, id, p), nil
}

// validObject reports whether raw decodes as a JSON object.
func validObject(raw string) bool {
	_, err := decodeObject(raw)
	return err == nil
}
