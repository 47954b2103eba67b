package delivery

import (
	"context"
	"encoding/json"

	"github.com/demiurge/demiurge"
)

// Enqueue records one delivery intent and returns its delivery id
// ("delivery_…"). Nothing is sent: Dispatch does that.
//
// A policy that writes history appends ONE batch (idempotency key
// delivery:<id>:message_outbox) of message.persisted (assistant; visible as
// the intent; model-visible only under persist) + delivery.queued +
// work.enqueued (kind delivery.send, work_id = delivery_id), so the
// transcript never names a delivery the outbox lacks or the reverse. A
// transient intent appends delivery.queued + work.enqueued only. Either way
// Enqueue is one store transaction.
//
// The work item's next_attempt_at is now+Options.Handoff: until then the
// delivery is left to the caller, which dispatches it under its turn's
// route; after that Run takes up a delivery nobody dispatched (its Host
// crashed between the two).
//
// Errors: EINVALID for an intent that fails validation (the spec's
// messages), ENOTFOUND "session not found: <id>", store errors.
func (rt *Runtime) Enqueue(ctx context.Context, in demiurge.DeliveryIntent) (string, error) {
	n, err := validate(in)
	if err != nil {
		return "", err
	}
	if _, err := rt.st.Session(ctx, n.SessionID); err != nil {
		if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
			return "", demiurge.WrapError(demiurge.ENOTFOUND, err, "session not found: %s", n.SessionID)
		}
		return "", err
	}
	id, b, err := rt.intentBatch(n)
	if err != nil {
		return "", err
	}
	if _, err := rt.st.Append(ctx, b.Events, b.IdempotencyKey, nil); err != nil {
		return "", err
	}
	return id, nil
}

// intentBatch is the batch that records the validated intent n under a
// new delivery id.
func (rt *Runtime) intentBatch(n normalized) (string, demiurge.EventBatch, error) {
	id := demiurge.NewID("delivery")
	blocks, err := blocksPayload(n.blocks)
	if err != nil {
		return "", demiurge.EventBatch{}, err
	}
	var events []demiurge.Event
	messageID := ""
	if n.writesHistory() {
		messageID = demiurge.NewID("msg")
		events = append(events, rt.event(demiurge.AggMessage, messageID, demiurge.MessagePersistedPayload{
			MessageID: messageID,
			SessionID: n.SessionID,
			TurnID:    n.TurnID,
			Role:      demiurge.RoleAssistant,
			Visible:   &n.Visible,
			Content:   historyContent(n.HistoryText, n.HistoryPolicy, n.Channel, n.Source, id, demiurge.DeliveryQueued),
		}))
	}
	body := map[string]any{
		"session_id":           n.SessionID,
		"kind":                 n.Kind,
		"visible":              n.Visible,
		"history_policy":       n.HistoryPolicy,
		"message_id":           messageID,
		"history_text":         n.HistoryText,
		"failure_history_text": n.FailureHistoryText,
		"fallback_text":        n.fallbackText,
		"blocks":               blocks,
	}
	if len(n.Metadata) > 0 {
		body["metadata"] = n.Metadata
	}
	demiurge.CompactDeliveryBody(body)
	target := map[string]any{"conversation_key": n.ConversationKey}
	if n.Source != "" {
		target["source"] = n.Source
	}
	if n.ReplyTo != "" {
		target["reply_to"] = n.ReplyTo
	}
	key := "delivery:" + id + ":message_outbox"
	if !n.writesHistory() {
		key = "delivery:" + id + ":outbox"
	}
	events = append(events,
		rt.event(demiurge.AggDelivery, id, demiurge.DeliveryQueuedPayload{
			OwnerTurnID:    n.TurnID,
			Channel:        n.Channel,
			Target:         target,
			Status:         demiurge.DeliveryQueued,
			IdempotencyKey: key,
			Payload:        body,
		}),
		rt.event(demiurge.AggWork, id, demiurge.WorkEnqueuedPayload{
			Kind:           WorkKind,
			Status:         demiurge.WorkQueued,
			OwnerSessionID: n.SessionID,
			OwnerTurnID:    n.TurnID,
			NextAttemptAt:  demiurge.FormatTime(rt.opts.Now().Add(rt.opts.Handoff)),
			Payload:        map[string]any{"delivery_id": id, "message_id": messageID},
		}),
	)
	return id, demiurge.EventBatch{Events: events, IdempotencyKey: key}, nil
}

// historyContent is the content of the transcript message of a delivery:
// model-visible only under the persist policy, and tagged with the delivery
// and its status so that a reader of the transcript can tell what reached the
// user.
func historyContent(text, policy, channel, source, deliveryID, status string) *demiurge.MessageBody {
	modelVisible := policy == demiurge.HistoryPersist
	return &demiurge.MessageBody{
		Text:         text,
		Kind:         "message",
		ModelVisible: &modelVisible,
		Channel:      channel,
		Source:       source,
		Metadata: map[string]any{
			"delivery_id":     deliveryID,
			"delivery_status": status,
			"history_policy":  policy,
		},
	}
}

// blocksPayload renders blocks as JSON values, the form the store keeps.
func blocksPayload(blocks []demiurge.DeliveryBlock) ([]any, error) {
	raw, err := json.Marshal(blocks)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINVALID, err, "delivery blocks are not JSON-encodable")
	}
	var out []any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "delivery blocks do not decode")
	}
	return out, nil
}
