package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

var (
	sqlDeliveryQueue = `INSERT OR REPLACE INTO outbox
  (delivery_id, owner_turn_id, channel, target_json, status, idempotency_key, payload_json, attempts,
   last_error, host_id, created_at, sent_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`
	sqlDeliveryUpdate = `UPDATE outbox SET status = ?1, attempts = COALESCE(?2, attempts), last_error = ?3,
  sent_at = CASE WHEN ?4 THEN ?5 ELSE sent_at END, host_id = COALESCE(?6, host_id)
  WHERE delivery_id = ?7`
)

func init() {
	on(projectDeliveryQueued)
	onFamily(projectDeliveryUpdate, demiurge.DeliverySendingPayload{}, demiurge.DeliverySentPayload{},
		demiurge.DeliveryFailedPayload{}, demiurge.DeliveryRetryScheduledPayload{},
		demiurge.DeliveryUnknownPayload{}, demiurge.DeliveryUnroutedPayload{})
}

func projectDeliveryQueued(t *wtx, e evMeta, p demiurge.DeliveryQueuedPayload) error {
	target, err := marshalJSON(p.Target)
	if err != nil {
		return err
	}
	body, err := marshalJSON(p.Payload)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlDeliveryQueue, e.aggID, nullable(p.OwnerTurnID), nullable(p.Channel), target,
		cmp.Or(p.Status, demiurge.DeliveryQueued), nullable(p.IdempotencyKey), body, p.Attempts,
		nullable(p.LastError), nullable(p.HostID), e.stamp())
	return err
}

// projectDeliveryUpdate: status is the payload's or the event suffix;
// last_error is overwritten (absent → NULL); sent_at is set on delivery.sent.
// A delivery.failed naming its history message (message_id) annotates it.
func projectDeliveryUpdate(t *wtx, e evMeta, p demiurge.DeliveryChange) error {
	sent := e.typ == demiurge.EvDeliverySent
	sentAt := storedTime(p.SentAt)
	if sentAt == nil {
		sentAt = e.stamp()
	}
	status := cmp.Or(p.Status, suffix(e.typ))
	if _, err := t.exec(sqlDeliveryUpdate, status, optionalInt(p.Attempts), nullable(p.LastError),
		sent, sentAt, nullable(p.HostID), e.aggID); err != nil {
		return err
	}
	if e.typ != demiurge.EvDeliveryFailed || p.MessageID == "" {
		return nil
	}
	return t.annotateDeliveryMessage(p.MessageID, status, p.LastError, p.FailureText)
}

// sqlMessageAnnotate merges keys into content_json.metadata of one message
// and changes nothing else: text, kind and visibility stay as persisted. A
// metadata value that is not an object is replaced; a row whose content is
// not valid JSON is left alone rather than failing the delivery record.
var sqlMessageAnnotate = `UPDATE messages SET content_json = json_set(content_json, '$.metadata',
  json_patch(CASE WHEN json_type(content_json, '$.metadata') = 'object'
    THEN json_extract(content_json, '$.metadata') ELSE '{}' END, ?1))
  WHERE message_id = ?2 AND json_valid(content_json)`

// annotateDeliveryMessage records a delivery failure on its history
// message: metadata delivery_status, delivery_error and, when the intent
// gave one that differs from the body, delivery_failure_text. The message
// body is never rewritten: the transcript keeps what the turn said. The edit
// is counted on the session (message_edits) so cached history windows are
// re-read.
func (t *wtx) annotateDeliveryMessage(messageID, status, lastError, failureText string) error {
	meta := map[string]any{"delivery_status": status, "delivery_error": lastError}
	if failureText != "" {
		meta["delivery_failure_text"] = failureText
	}
	patch, err := marshalJSON(meta)
	if err != nil {
		return err
	}
	res, err := t.exec(sqlMessageAnnotate, patch, messageID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	_, err = t.exec(sqlSessionMessageEdited, messageID)
	return err
}
