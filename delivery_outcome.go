package demiurge

import "time"

// DeliveryOutcomeEvents are the events that record how a started send of
// d ended: one for its delivery.send work item and one for its outbox row,
// which move together.
//
//	status     work item                        outbox event
//	sent       succeeded                        delivery.sent (sent_at)
//	unrouted   succeeded                        delivery.unrouted {last_error}
//	failed     failed {last_error}              delivery.failed {last_error, message_id?, failure_text?}
//	unknown    unknown (claim cleared)          delivery.unknown {last_error}
//	queued     retry_scheduled at retryAt       delivery.retry_scheduled {status queued, last_error,
//	           (claim cleared)                    next_attempt_at}: the row is queued again
//
// A failed delivery that wrote a history message names it (message_id) so
// that the projection annotates that message's metadata; the failure text
// is recorded beside the message's text, never over it. Errors are
// EINVALID for another status or a retry without retryAt.
func DeliveryOutcomeEvents(d Delivery, status, lastError string, retryAt time.Time) ([]Event, error) {
	work := WorkChange{LastError: lastError}
	out := DeliveryChange{Status: status, Attempts: &d.Attempts, LastError: lastError}
	var workType, outType string
	switch status {
	case DeliverySent:
		workType, outType = EvWorkSucceeded, EvDeliverySent
		work.Status = WorkSucceeded
	case DeliveryUnrouted:
		workType, outType = EvWorkSucceeded, EvDeliveryUnrouted
		work.Status = WorkSucceeded
	case DeliveryFailed:
		workType, outType = EvWorkFailed, EvDeliveryFailed
		work.Status = WorkFailed
		if m, _ := d.Payload["message_id"].(string); m != "" {
			out.MessageID = m
			body, _ := d.Payload["history_text"].(string)
			if f, _ := d.Payload["failure_history_text"].(string); f != "" && f != body {
				out.FailureText = f
			}
		}
	case DeliveryUnknown:
		workType, outType = EvWorkUnknown, EvDeliveryUnknown
		work.Status, work.ClearClaim = WorkUnknown, true
	case DeliveryQueued:
		if retryAt.IsZero() {
			return nil, Errorf(EINVALID, "delivery %s: a retry needs a next attempt time", d.ID)
		}
		workType, outType = EvWorkFailed, EvDeliveryRetryScheduled
		next := FormatTime(retryAt)
		work.Status, work.ClearClaim, work.NextAttemptAt = WorkRetryScheduled, true, next
		out.NextAttemptAt = next
	default:
		return nil, Errorf(EINVALID, "unsupported delivery outcome: %s", status)
	}
	workPayload, err := work.As(workType)
	if err != nil {
		return nil, err
	}
	outPayload, err := out.As(outType)
	if err != nil {
		return nil, err
	}
	return []Event{NewEvent(AggWork, d.ID, workPayload), NewEvent(AggDelivery, d.ID, outPayload)}, nil
}
