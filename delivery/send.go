package delivery

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/demiurge/demiurge"
)

// Send delivers one intent of a running turn now and leaves its record to
// the turn: it returns the batches that record the intent, the start of
// its send and the outcome, for the caller to write with its next
// transaction (the turn's next write, at the latest its end). Nothing is
// written here, so a turn's deliveries cost it no transaction of their own.
//
// The order differs from Enqueue and Dispatch, which record the start
// before the route is called: here the route is called first. A delivery
// is still sent at most once: if the process dies before the caller's
// write, nothing names the delivery, so nothing ever sends it again; the
// turn it belongs to is then lost with it (restart recovery marks the turn
// lost), as everything the turn recorded since its last write is.
//
// When ctx is already done, nothing is sent: the record is the queued
// intent alone, which the delivery loop takes up after the handoff, as it
// would a delivery nobody dispatched, and the error is ECANCELED. Otherwise
// status is what Dispatch would leave, and the error is ECANCELED only when
// ctx ended during the send (the record then says failed "delivery
// cancelled"). An invalid intent gives EINVALID, an empty id and no record.
func (rt *Runtime) Send(ctx context.Context, in demiurge.DeliveryIntent) (id, status string, record []demiurge.EventBatch, err error) {
	n, err := validate(in)
	if err != nil {
		return "", "", nil, err
	}
	id, b, err := rt.intentBatch(n)
	if err != nil {
		return "", "", nil, err
	}
	if err := ctx.Err(); err != nil {
		return id, "", []demiurge.EventBatch{b}, demiurge.WrapError(demiurge.ECANCELED, err, "delivery %s: cancelled before dispatch", id)
	}
	d, start := rt.startOf(id, b)
	o := rt.attempt(ctx, d, d.Attempts)
	evs, err := demiurge.DeliveryOutcomeEvents(d, o.status, o.reason, o.retryAt)
	if err != nil {
		return "", "", nil, err
	}
	return id, o.status, []demiurge.EventBatch{b, start, {Events: evs}}, o.err
}

// startOf is the start of the send of the delivery batch b records under
// id: the events StartDeliverySend appends for a queued delivery whose work
// item is queued, and the outbox row as it is afterwards.
func (rt *Runtime) startOf(id string, b demiurge.EventBatch) (demiurge.Delivery, demiurge.EventBatch) {
	now := rt.opts.Now().UTC()
	var d demiurge.Delivery
	for _, e := range b.Events {
		if q, ok := e.Body().(demiurge.DeliveryQueuedPayload); ok {
			d = demiurge.Delivery{
				ID: id, OwnerTurnID: q.OwnerTurnID, Channel: q.Channel, Target: q.Target,
				Status: demiurge.DeliverySending, IdempotencyKey: b.IdempotencyKey, Attempts: 1,
				Payload: storedBody(q.Payload), CreatedAt: e.CreatedAt,
			}
		}
	}
	attempts := 1
	claim := demiurge.WorkSendingPayload{
		Status: demiurge.WorkSending, ClaimID: demiurge.NewID("claim"), OwnerID: OwnerID,
		ClaimedAt: demiurge.FormatTime(now), Attempts: &attempts,
		LeaseExpiresAt: demiurge.FormatTime(now.Add(rt.opts.Lease)),
	}
	sending := demiurge.DeliverySendingPayload{Status: demiurge.DeliverySending, Attempts: &attempts, HostID: rt.opts.HostID}
	return d, demiurge.EventBatch{Events: []demiurge.Event{
		demiurge.NewEvent(demiurge.AggWork, id, claim),
		demiurge.NewEvent(demiurge.AggDelivery, id, sending),
	}}
}

// storedBody is the outbox body of intentBatch as the store gives it back.
// Its values are JSON values already except the intent's metadata, which
// is made one the way the store would.
func storedBody(body map[string]any) map[string]any {
	out := demiurge.ExpandDeliveryBody(maps.Clone(body))
	if md, ok := body["metadata"]; ok {
		raw, err := json.Marshal(md)
		var m map[string]any
		if err == nil && json.Unmarshal(raw, &m) == nil {
			out["metadata"] = m
		}
	}
	return out
}
