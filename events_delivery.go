package demiurge

// DeliveryQueuedPayload queues one outbox row (aggregate delivery
// "<delivery id>"). Target and Payload are the row's target and body,
// free-form per channel; a delivery intent's body is stored compacted
// (CompactDeliveryBody) and read expanded.
type DeliveryQueuedPayload struct {
	OwnerTurnID    string         `json:"owner_turn_id,omitempty"`
	Channel        string         `json:"channel,omitempty"`
	Target         map[string]any `json:"target,omitempty"`
	Status         string         `json:"status,omitempty"` // default queued
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	Payload        map[string]any `json:"payload,omitempty"`
	Attempts       int            `json:"attempts"`
	LastError      string         `json:"last_error,omitempty"`
	HostID         string         `json:"host_id,omitempty"`
}

// DeliveryChange is the payload of the outbox transitions: Status defaults
// to the event type's suffix, LastError is always replaced (absent: none),
// Attempts and HostID replace the stored ones when given; SentAt (default:
// the event time) is set by delivery.sent. A delivery.failed naming the
// history message of the delivery (MessageID) annotates that message, with
// FailureText when the intent gave one.
type DeliveryChange struct {
	Status        string `json:"status,omitempty"`
	Attempts      *int   `json:"attempts,omitempty"`
	LastError     string `json:"last_error,omitempty"`
	SentAt        string `json:"sent_at,omitempty"`
	HostID        string `json:"host_id,omitempty"`
	MessageID     string `json:"message_id,omitempty"`
	FailureText   string `json:"failure_text,omitempty"`
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
}

// The outbox transitions, one type each over DeliveryChange.
type (
	DeliverySendingPayload        DeliveryChange
	DeliverySentPayload           DeliveryChange
	DeliveryFailedPayload         DeliveryChange
	DeliveryRetryScheduledPayload DeliveryChange
	DeliveryUnknownPayload        DeliveryChange
	DeliveryUnroutedPayload       DeliveryChange
)

// As returns c as the payload of the outbox transition typ.
func (c DeliveryChange) As(typ string) (EventPayload, error) {
	switch typ {
	case EvDeliverySending:
		return DeliverySendingPayload(c), nil
	case EvDeliverySent:
		return DeliverySentPayload(c), nil
	case EvDeliveryFailed:
		return DeliveryFailedPayload(c), nil
	case EvDeliveryRetryScheduled:
		return DeliveryRetryScheduledPayload(c), nil
	case EvDeliveryUnknown:
		return DeliveryUnknownPayload(c), nil
	case EvDeliveryUnrouted:
		return DeliveryUnroutedPayload(c), nil
	}
	return nil, notOfFamily(typ, "outbox transition")
}

func (DeliveryQueuedPayload) Type() string         { return EvDeliveryQueued }
func (DeliverySendingPayload) Type() string        { return EvDeliverySending }
func (DeliverySentPayload) Type() string           { return EvDeliverySent }
func (DeliveryFailedPayload) Type() string         { return EvDeliveryFailed }
func (DeliveryRetryScheduledPayload) Type() string { return EvDeliveryRetryScheduled }
func (DeliveryUnknownPayload) Type() string        { return EvDeliveryUnknown }
func (DeliveryUnroutedPayload) Type() string       { return EvDeliveryUnrouted }
