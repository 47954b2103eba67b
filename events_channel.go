package demiurge

// Channel inbox events (aggregate channel_inbound "<inbound id>").
const (
	AggChannelInbound = "channel_inbound"

	EvChannelInboundAccepted       = "channel_inbound.accepted"
	EvChannelInboundClaimed        = "channel_inbound.claimed"
	EvChannelInboundStarted        = "channel_inbound.started"
	EvChannelInboundCompleted      = "channel_inbound.completed"
	EvChannelInboundRetryScheduled = "channel_inbound.retry_scheduled"
	EvChannelInboundDeadLettered   = "channel_inbound.dead_lettered"
)

// ChannelInboundAcceptedPayload records one accepted inbound envelope; its
// idempotency key is "inbound:<core>:<channel>:<event_key>", so the same
// platform message is accepted once.
type ChannelInboundAcceptedPayload struct {
	CoreID          string              `json:"core_id"`
	Channel         string              `json:"channel"`
	EventKey        string              `json:"event_key"`
	ConversationKey string              `json:"conversation_key"`
	PrincipalKey    string              `json:"principal_key"`
	Source          string              `json:"source,omitempty"`
	ReplyTo         string              `json:"reply_to,omitempty"`
	Text            string              `json:"text"`
	Metadata        map[string]any      `json:"metadata,omitempty"`
	Attachments     []InboundAttachment `json:"attachments,omitempty"`
}

func (ChannelInboundAcceptedPayload) Type() string { return EvChannelInboundAccepted }

// ChannelInboundChange is the payload of an inbound's transitions. The
// status is the event's (claimed, running, done, retry_scheduled,
// dead_letter); fields given replace the stored ones, LastError always.
type ChannelInboundChange struct {
	ClaimID       string `json:"claim_id"`
	HostID        string `json:"host_id,omitempty"`
	Attempts      *int   `json:"attempts,omitempty"`
	TurnID        string `json:"turn_id,omitempty"`
	SessionID     string `json:"session_id,omitempty"`
	Result        string `json:"result,omitempty"`
	LastError     string `json:"last_error,omitempty"`
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
}

// The inbound transitions, one type each over ChannelInboundChange.
type (
	ChannelInboundClaimedPayload        ChannelInboundChange
	ChannelInboundStartedPayload        ChannelInboundChange
	ChannelInboundCompletedPayload      ChannelInboundChange
	ChannelInboundRetryScheduledPayload ChannelInboundChange
	ChannelInboundDeadLetteredPayload   ChannelInboundChange
)

func (ChannelInboundClaimedPayload) Type() string        { return EvChannelInboundClaimed }
func (ChannelInboundStartedPayload) Type() string        { return EvChannelInboundStarted }
func (ChannelInboundCompletedPayload) Type() string      { return EvChannelInboundCompleted }
func (ChannelInboundRetryScheduledPayload) Type() string { return EvChannelInboundRetryScheduled }
func (ChannelInboundDeadLetteredPayload) Type() string   { return EvChannelInboundDeadLettered }

// InboundStatusOf is the inbox status the transition event typ leaves.
func InboundStatusOf(typ string) string {
	switch typ {
	case EvChannelInboundAccepted:
		return InboundQueued
	case EvChannelInboundClaimed:
		return InboundClaimed
	case EvChannelInboundStarted:
		return InboundRunning
	case EvChannelInboundCompleted:
		return InboundDone
	case EvChannelInboundRetryScheduled:
		return InboundRetryScheduled
	case EvChannelInboundDeadLettered:
		return InboundDeadLetter
	}
	return ""
}
