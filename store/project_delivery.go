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
func projectDeliveryUpdate(t *wtx, e *demiurge.Event, p payload) error {
	sent := e.Type == demiurge.EvDeliverySent
	sentAt := p.ntime("sent_at")
	if sentAt == nil {
		sentAt = eventTime(e)
	}
	_, err := t.exec(sqlDeliveryUpdate, p.strOr("status", suffix(e.Type)), p.nnum("attempts"), p.nstr("last_error"),
		sent, sentAt, p.nstr("host_id"), e.AggregateID)
	return err
}
