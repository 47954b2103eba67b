package delivery

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/demiurge/demiurge"
)

// Send is Enqueue and Dispatch of one intent of a running turn in two store
// transactions instead of three: first (the caller's events not yet
// written), the intent's batch and the start of its send commit together,
// as Store.AppendBatches would; then the route is called and the outcome
// recorded as Dispatch does. The delivery is new, so its start is the one
// StartDeliverySend makes of a queued delivery (a fresh claim, attempt 1)
// and nothing is read back. The caller holds the intent's session (a turn
// under its lease), so Send does not read it either. It returns the
// delivery id and the status Dispatch would; errors are Enqueue's and
// Dispatch's. first is written exactly when the returned id is not empty.
func (rt *Runtime) Send(ctx context.Context, in demiurge.DeliveryIntent, first []demiurge.EventBatch) (id, status string, err error) {
	n, err := validate(in)
	if err != nil {
		return "", "", err
	}
	id, b, err := rt.intentBatch(n)
	if err != nil {
		return "", "", err
	}
	batches := append(first[:len(first):len(first)], b)
	if err := ctx.Err(); err != nil {
		// Recorded, never started: the delivery loop takes it up after the
		// handoff, as it would a delivery nobody dispatched.
		if _, aerr := rt.st.AppendBatches(context.WithoutCancel(ctx), batches); aerr != nil {
			return "", "", aerr
		}
		return id, "", demiurge.WrapError(demiurge.ECANCELED, err, "delivery %s: cancelled before dispatch", id)
	}
	d, w, start := rt.startOf(id, b)
	if _, err := rt.st.AppendBatches(ctx, append(batches, start)); err != nil {
		return "", "", err
	}
	status, err = rt.send(ctx, d, w)
	return id, status, err
}

// startOf is the start of the send of the delivery batch b records under
// id: the events StartDeliverySend appends for a queued delivery whose work
// item is queued, and the rows as they are afterwards.
func (rt *Runtime) startOf(id string, b demiurge.EventBatch) (demiurge.Delivery, demiurge.WorkItem, demiurge.EventBatch) {
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
	w := demiurge.WorkItem{ID: id, Kind: WorkKind, Status: demiurge.WorkSending, ClaimID: claim.ClaimID, OwnerID: OwnerID, Attempts: attempts}
	sending := demiurge.DeliverySendingPayload{Status: demiurge.DeliverySending, Attempts: &attempts, HostID: rt.opts.HostID}
	return d, w, demiurge.EventBatch{Events: []demiurge.Event{
		demiurge.NewEvent(demiurge.AggWork, id, claim),
		demiurge.NewEvent(demiurge.AggDelivery, id, sending),
	}}
}

// storedBody is the outbox body of intentBatch as the store gives it back.
// Its values are JSON values already except the intent's metadata, which
// is made one the way the store would.
func storedBody(body map[string]any) map[string]any {
	out := maps.Clone(body)
	if md, ok := body["metadata"]; ok {
		raw, err := json.Marshal(md)
		var m map[string]any
		if err == nil && json.Unmarshal(raw, &m) == nil {
			out["metadata"] = m
		}
	}
	return out
}
