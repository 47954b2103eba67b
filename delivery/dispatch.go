package delivery

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/demiurge/demiurge"
)

// Result is the outcome of dispatching one delivery.
type Result struct {
	DeliveryID string
	// Status is sent, unrouted or failed as recorded in the outbox, unknown
	// when the work claim was refused (nothing was sent and nothing recorded),
	// or the status the outbox row already had when it was not queued.
	Status string
}

// Dispatch sends delivery id once (spec host-runtime §5.5):
//
//  1. Only a queued outbox row is dispatched. Any other row is left alone and
//     its status returned: in particular a row left `sending` by a crash is
//     never re-sent (restart reconciliation makes it `unknown`).
//  2. The delivery's work item is claimed (owner host.delivery_runtime). A
//     refused claim (another dispatcher holds it, or it ended), or a work
//     item already in `sending`, returns "unknown" without sending.
//  3. delivery.sending{attempts} is appended only if the delivery has no
//     event newer than the one this dispatcher saw queued (an optimistic
//     fence: one dispatcher at most ever gets past it); then work → sending,
//     then the router delivers.
//  4. Unrouted → delivery.unrouted{last_error: no_interactive_route}, work
//     succeeded; an invisible (history-only) delivery is never handed to a
//     route and ends the same way with last_error not_visible. Delivered → delivery.sent, work succeeded. A route error →
//     delivery.failed{last_error}, work failed and, if the delivery wrote a
//     history message, message.updated with the failure history text (once).
//     Cancellation of ctx while sending → work failed and delivery.failed
//     with "delivery cancelled", and the ECANCELED error.
//
// A route failure is a result ("failed"), not an error: delivery failure
// never fails a turn. Errors are store failures (the delivery may then stay
// `sending`, which reconciliation turns into `unknown`), ENOTFOUND for a
// missing delivery and ECANCELED.
func (rt *Runtime) Dispatch(ctx context.Context, id string) (string, error) {
	d, err := rt.st.Delivery(ctx, id)
	if err != nil {
		if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
			return "", demiurge.WrapError(demiurge.ENOTFOUND, err, "delivery not found: %s", id)
		}
		return "", err
	}
	if d.Status != demiurge.DeliveryQueued {
		return d.Status, nil
	}
	if err := ctx.Err(); err != nil {
		return "", demiurge.WrapError(demiurge.ECANCELED, err, "delivery %s: cancelled before dispatch", id)
	}
	// fence is the delivery's newest event as this dispatcher saw it queued:
	// delivery.sending is appended only if nothing happened to the delivery
	// since, so at most one dispatcher ever moves it to sending.
	fence, err := rt.st.LastSeq(ctx, demiurge.AggDelivery, id)
	if err != nil {
		return "", err
	}
	if w, err := rt.st.WorkItem(ctx, id); err != nil {
		if demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
			return "", err
		}
	} else if w.Status == demiurge.WorkSending {
		// A send started and its record never finished: never again.
		return demiurge.DeliveryUnknown, nil
	}
	item, ok, err := rt.st.ClaimWork(ctx, id, OwnerID, rt.lease)
	if err != nil {
		return "", err
	}
	if !ok {
		return demiurge.DeliveryUnknown, nil
	}
	out, err := outbound(d)
	if err != nil {
		// A row this build cannot read is never sent on a guess.
		return rt.fail(ctx, d, item, demiurge.ErrorMessage(err), false)
	}

	// From here on every record is written even if the caller gives up, so
	// that the outbox never stays half-moved by a cancelled context.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	sending := rt.event(demiurge.AggDelivery, id, demiurge.EvDeliverySending, map[string]any{
		"status":   demiurge.DeliverySending,
		"attempts": item.Attempts,
	})
	if rt.hostID != "" {
		sending.Payload["host_id"] = rt.hostID
	}
	if _, err := rt.st.Append(wctx, []demiurge.Event{sending}, "", &demiurge.Expected{
		AggregateType: demiurge.AggDelivery, AggregateID: id, LastSeq: fence,
	}); err != nil {
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			return demiurge.DeliveryUnknown, nil
		}
		return "", err
	}
	if _, err := rt.st.TransitionWork(wctx, id, item.ClaimID, demiurge.WorkSending, demiurge.WorkFields{}); err != nil {
		return "", err
	}

	var res DeliverResult
	var sendErr error
	reason := NoInteractiveRoute
	if out.Visible {
		res, sendErr = rt.router.Deliver(ctx, out)
	} else {
		// History-only: nothing is shown, so no route ever sees it.
		res, reason = Unrouted, NotVisible
	}
	switch {
	case sendErr == nil && res == Unrouted:
		if _, err := rt.st.TransitionWork(wctx, id, item.ClaimID, demiurge.WorkSucceeded, demiurge.WorkFields{}); err != nil {
			return "", err
		}
		return demiurge.DeliveryUnrouted, rt.record(wctx, id, demiurge.EvDeliveryUnrouted, map[string]any{
			"status":     demiurge.DeliveryUnrouted,
			"last_error": reason,
			"attempts":   item.Attempts,
		})
	case sendErr == nil:
		if _, err := rt.st.TransitionWork(wctx, id, item.ClaimID, demiurge.WorkSucceeded, demiurge.WorkFields{}); err != nil {
			return "", err
		}
		return demiurge.DeliverySent, rt.record(wctx, id, demiurge.EvDeliverySent, map[string]any{
			"status":   demiurge.DeliverySent,
			"attempts": item.Attempts,
		})
	case ctx.Err() != nil:
		status, err := rt.fail(wctx, d, item, Cancelled, false)
		if err != nil {
			return status, err
		}
		return status, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "delivery %s cancelled", id)
	default:
		// Only coded messages are recorded: an uncoded route error may carry
		// a credential (a bot URL, a header), so it is kept out of rows.
		return rt.fail(wctx, d, item, demiurge.ErrorMessage(sendErr), true)
	}
}

// fail records a failed send: work failed, delivery.failed and, when
// rewriteHistory is set and the delivery wrote a history message, the
// failure history text on that message (once per delivery).
func (rt *Runtime) fail(ctx context.Context, d demiurge.Delivery, item demiurge.WorkItem, reason string, rewriteHistory bool) (string, error) {
	if _, err := rt.st.TransitionWork(ctx, d.ID, item.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{LastError: reason}); err != nil {
		return "", err
	}
	if err := rt.record(ctx, d.ID, demiurge.EvDeliveryFailed, map[string]any{
		"status":     demiurge.DeliveryFailed,
		"last_error": reason,
		"attempts":   item.Attempts,
	}); err != nil {
		return "", err
	}
	if rewriteHistory {
		if err := rt.rewriteHistory(ctx, d); err != nil {
			return "", err
		}
	}
	return demiurge.DeliveryFailed, nil
}

// rewriteHistory replaces the transcript text of a failed delivery with its
// failure history text (message.updated, idempotency key
// delivery:<id>:failure_history so that only the first failure rewrites it).
func (rt *Runtime) rewriteHistory(ctx context.Context, d demiurge.Delivery) error {
	messageID, _ := d.Payload["message_id"].(string)
	if messageID == "" {
		return nil
	}
	text, _ := d.Payload["failure_history_text"].(string)
	policy, _ := d.Payload["history_policy"].(string)
	sessionID, _ := d.Payload["session_id"].(string)
	source, _ := d.Target["source"].(string)
	content := historyContent(text, policy, d.Channel, source, d.ID, demiurge.DeliveryFailed)
	ev := rt.event(demiurge.AggMessage, messageID, demiurge.EvMessageUpdated, map[string]any{
		"message_id": messageID,
		"session_id": sessionID,
		"content":    content,
	})
	_, err := rt.st.Append(ctx, []demiurge.Event{ev}, "delivery:"+d.ID+":failure_history", nil)
	return err
}

func (rt *Runtime) record(ctx context.Context, id, typ string, payload map[string]any) error {
	_, err := rt.st.Append(ctx, []demiurge.Event{rt.event(demiurge.AggDelivery, id, typ, payload)}, "", nil)
	return err
}

// DispatchTurn dispatches the queued deliveries of turnID (at most
// demiurge.MaxDeliveryLimit, the newest) in creation order and returns what
// happened to each. It stops at the first error (a store
// failure or cancellation); route failures are results, not errors.
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
func outbound(d demiurge.Delivery) (Outbound, error) {
	p := d.Payload
	str := func(k string) string { s, _ := p[k].(string); return s }
	out := Outbound{
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
			return out, demiurge.WrapError(demiurge.EINTERNAL, err, "delivery %s: outbox blocks are unreadable: %v", d.ID, err)
		}
	}
	return out, nil
}
