package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/demiurge/demiurge"
)

// Result is the outcome of dispatching one delivery.
type Result struct {
	DeliveryID string
	// Status is the outbox status the dispatch left (sent, unrouted,
	// failed, unknown, or queued when a transient failure scheduled a
	// retry), "queued" for a delivery waiting for its next attempt, the
	// status the row already had when it was not queued, or "unknown" when
	// another dispatcher holds its claim (nothing sent, nothing recorded).
	Status string
}

// Dispatch sends delivery id at most once and
// returns the status it left:
//
//  1. One store transaction claims the delivery's work item (owner
//     host.delivery_runtime) and moves it and the outbox row to sending
//     (delivery.sending{attempts, host_id}). Only a queued row whose work
//     item is queued, due for a retry, or under an expired claim is
//     started; otherwise nothing is written and the answer is the row's
//     status, "queued" for a retry not yet due, or "unknown" when someone
//     else holds the claim.
//  2. The route is called (at most Options.SendTimeout).
//  3. One store transaction records the outcome:
//     - delivered → sent; no live route → unrouted (last_error
//     no_interactive_route); an invisible (history-only) delivery never
//     reaches a route and is unrouted with last_error not_visible;
//     - a transient route error (see Transient) → queued again with the
//     work item retry_scheduled after a backoff, until MaxAttempts; then,
//     and for any other route error → failed with the route's coded
//     message, and the history message, if any, is annotated (metadata
//     delivery_status, delivery_error, delivery_failure_text); its text is
//     never rewritten;
//     - the route did not answer within SendTimeout → unknown (TimedOut):
//     it had the outbound and may have shown it, so it is never retried;
//     - ctx ended during the send → failed "delivery cancelled" and the
//     ECANCELED error.
//
// A route failure is a result, not an error: delivery failure never fails a
// turn. Errors are ECANCELED (ctx ended before the start or during the
// send), ENOTFOUND "delivery not found: <id>", and store failures; after a
// store failure in step 3 the row stays sending and restart reconciliation
// makes it unknown. If reconciliation ended the send first (its lease ran
// out), that record stands and its status is returned.
func (rt *Runtime) Dispatch(ctx context.Context, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", demiurge.WrapError(demiurge.ECANCELED, err, "delivery %s: cancelled before dispatch", id)
	}
	d, w, started, err := rt.st.StartDeliverySend(ctx, id, "", OwnerID, rt.opts.HostID, rt.opts.Lease)
	if err != nil {
		return "", err
	}
	if !started {
		return notStarted(d, w), nil
	}
	return rt.send(ctx, d, w)
}

// notStarted is what Dispatch answers for a delivery it did not start.
func notStarted(d demiurge.Delivery, w demiurge.WorkItem) string {
	switch {
	case d.Status != demiurge.DeliveryQueued:
		return d.Status
	case w.Status == demiurge.WorkRetryScheduled:
		return demiurge.DeliveryQueued // its next attempt is not due yet
	default:
		return demiurge.DeliveryUnknown // another dispatcher holds it
	}
}

// send calls the route for a started delivery and records the outcome.
func (rt *Runtime) send(ctx context.Context, d demiurge.Delivery, w demiurge.WorkItem) (string, error) {
	// Every record from here on is written even if the caller gives up, so
	// that the outbox never stays half-moved by a cancelled context.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	o := rt.attempt(ctx, d, w.Attempts)
	status, err := rt.finish(wctx, d, w, o.status, o.reason, o.retryAt)
	if err == nil {
		err = o.err
	}
	return status, err
}

// outcome is what one attempt of a send leaves for the outbox to record.
type outcome struct {
	status, reason string
	retryAt        time.Time // of a transient failure that is retried
	err            error     // ECANCELED when the caller cancelled the send
}

// attempt hands delivery d to its route (unless it is invisible), as its
// attempt number attempts, and says what the outbox records.
func (rt *Runtime) attempt(ctx context.Context, d demiurge.Delivery, attempts int) outcome {
	out, err := outbound(d)
	if err != nil {
		// A row this build cannot read is never sent on a guess.
		return outcome{status: demiurge.DeliveryFailed, reason: demiurge.ErrorMessage(err)}
	}
	if !out.Visible {
		// History-only: nothing is shown, so no route ever sees it.
		return outcome{status: demiurge.DeliveryUnrouted, reason: NotVisible}
	}
	r := rt.deliver(ctx, out)
	switch {
	case r.err == nil && r.res == Unrouted:
		return outcome{status: demiurge.DeliveryUnrouted, reason: NoInteractiveRoute}
	case r.err == nil:
		return outcome{status: demiurge.DeliverySent}
	case r.end == callCancelled:
		return outcome{status: demiurge.DeliveryFailed, reason: Cancelled,
			err: demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "delivery %s cancelled", out.DeliveryID)}
	case r.end == callTimedOut:
		return outcome{status: demiurge.DeliveryUnknown, reason: TimedOut}
	}
	// Only coded messages are recorded: an uncoded route error may carry a
	// credential (a bot URL, a header), so it is kept out of rows.
	reason := demiurge.ErrorMessage(r.err)
	if Transient(r.err) {
		if at := rt.retryAt(attempts); !at.IsZero() {
			return outcome{status: demiurge.DeliveryQueued, reason: reason, retryAt: at}
		}
	}
	return outcome{status: demiurge.DeliveryFailed, reason: reason}
}

// finish records the outcome of a started send. When the send was ended by
// someone else meanwhile (ECONFLICT: reconciliation made it unknown after
// its lease ran out), that record stands and its status is returned.
func (rt *Runtime) finish(ctx context.Context, d demiurge.Delivery, w demiurge.WorkItem, status, reason string, retryAt time.Time) (string, error) {
	got, err := rt.st.FinishDeliverySend(ctx, d.ID, w.ClaimID, status, reason, retryAt)
	if err == nil {
		return got.Status, nil
	}
	if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
		if cur, rerr := rt.st.Delivery(ctx, d.ID); rerr == nil {
			rt.opts.Logger.Warn("delivery outcome superseded", "delivery_id", d.ID, "outcome", status, "status", cur.Status)
			return cur.Status, nil
		}
	}
	return "", err
}

// DispatchTurn dispatches the queued deliveries of turnID (at most
// demiurge.MaxDeliveryLimit, the newest) in creation order and returns what
// happened to each. It stops at the first error (a store failure or
// cancellation); route failures are results, not errors.
func (rt *Runtime) DispatchTurn(ctx context.Context, turnID string) ([]Result, error) {
	if turnID == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "dispatch requires a turn_id")
	}
	ds, err := rt.st.Deliveries(ctx, demiurge.DeliveryFilter{TurnID: turnID, Status: demiurge.DeliveryQueued, Limit: demiurge.MaxDeliveryLimit})
	if err != nil {
		return nil, err
	}
	slices.Reverse(ds) // the store lists newest first
	results := make([]Result, 0, len(ds))
	for _, d := range ds {
		status, err := rt.Dispatch(ctx, d.ID)
		if status != "" {
			results = append(results, Result{DeliveryID: d.ID, Status: status})
		}
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// outbound rebuilds what a route sees from the stored outbox row.
func outbound(d demiurge.Delivery) (demiurge.Outbound, error) {
	p := d.Payload
	str := func(k string) string { s, _ := p[k].(string); return s }
	out := demiurge.Outbound{
		DeliveryID: d.ID,
		SessionID:  str("session_id"),
		TurnID:     d.OwnerTurnID,
		Channel:    d.Channel,
		Kind:       str("kind"),
		Text:       str("fallback_text"),
	}
	out.Visible, _ = p["visible"].(bool)
	out.ConversationKey, _ = d.Target["conversation_key"].(string)
	if m, ok := p["metadata"].(map[string]any); ok {
		out.Metadata = m
	}
	if out.SessionID == "" {
		return out, demiurge.Errorf(demiurge.EINTERNAL, "delivery %s: outbox payload has no session_id", d.ID)
	}
	if raw, ok := p["blocks"]; ok && raw != nil {
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, &out.Blocks)
		}
		if err != nil {
			return out, demiurge.WrapError(demiurge.EINTERNAL, err, "delivery %s: outbox blocks are unreadable", d.ID)
		}
	}
	return out, nil
}
