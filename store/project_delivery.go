package store

import (
	"github.com/demiurge/demiurge"
)

var (
	sqlDeliveryQueue = prep(`INSERT OR REPLACE INTO outbox
  (delivery_id, owner_turn_id, channel, target_json, status, idempotency_key, payload_json, attempts,
   last_error, host_id, created_at, sent_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`)
	sqlDeliveryUpdate = prep(`UPDATE outbox SET status = ?1, attempts = COALESCE(?2, attempts), last_error = ?3,
  sent_at = CASE WHEN ?4 THEN ?5 ELSE sent_at END, host_id = COALESCE(?6, host_id)
  WHERE delivery_id = ?7`)
)

func init() {
	register(projectDeliveryQueued, demiurge.EvDeliveryQueued)
	register(projectDeliveryUpdate, demiurge.EvDeliverySending, demiurge.EvDeliverySent, demiurge.EvDeliveryFailed,
		demiurge.EvDeliveryRetryScheduled, demiurge.EvDeliveryUnknown, demiurge.EvDeliveryUnrouted)
}

func projectDeliveryQueued(t *wtx, e *demiurge.Event, p payload) error {
	target, err := p.jsonOr("target")
	if err != nil {
		return err
	}
	body, err := p.jsonOr("payload")
	if err != nil {
		return err
	}
	attempts, _ := p.num("attempts")
	_, err = t.exec(sqlDeliveryQueue, e.AggregateID, p.nstr("owner_turn_id"), p.nstr("channel"), target,
		p.strOr("status", demiurge.DeliveryQueued), p.nstr("idempotency_key"), body, attempts,
		p.nstr("last_error"), p.nstr("host_id"), eventTime(e))
	return err
}

// projectDeliveryUpdate: status is payload.status or the event suffix;
// last_error is overwritten (absent → NULL); sent_at is set on delivery.sent.
// A delivery.failed naming its history message (message_id) annotates it.
func projectDeliveryUpdate(t *wtx, e *demiurge.Event, p payload) error {
	sent := e.Type == demiurge.EvDeliverySent
	sentAt := p.ntime("sent_at")
	if sentAt == nil {
		sentAt = eventTime(e)
	}
	status := p.strOr("status", suffix(e.Type))
	if _, err := t.exec(sqlDeliveryUpdate, status, p.nnum("attempts"), p.nstr("last_error"),
		sent, sentAt, p.nstr("host_id"), e.AggregateID); err != nil {
		return err
	}
	if e.Type != demiurge.EvDeliveryFailed || p.str("message_id") == "" {
		return nil
	}
	return t.annotateDeliveryMessage(p.str("message_id"), status, p.str("last_error"), p.str("failure_text"))
}

// sqlMessageAnnotate merges keys into content_json.metadata of one message
// and changes nothing else: text, kind and visibility stay as persisted. A
// metadata value that is not an object is replaced; a row whose content is
// not valid JSON is left alone rather than failing the delivery record.
var sqlMessageAnnotate = prep(`UPDATE messages SET content_json = json_set(content_json, '$.metadata',
  json_patch(CASE WHEN json_type(content_json, '$.metadata') = 'object'
    THEN json_extract(content_json, '$.metadata') ELSE '{}' END, ?1))
  WHERE message_id = ?2 AND json_valid(content_json)`)

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
