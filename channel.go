package demiurge

import "time"

// InboundEnvelope is one inbound channel message as a channel adapter
// hands it to the ChannelInbox (spec surfaces §3.17): authenticated,
// allowlisted and minimally parsed before it is accepted. EventKey is the
// platform's stable id of the message (Telegram update id, the webhook's
// request id or a digest of its body, an email's Message-ID); the inbox
// accepts each (CoreID, Channel, EventKey) once.
type InboundEnvelope struct {
	CoreID          string
	Channel         string // the channel's configured (normalised) name
	EventKey        string
	ConversationKey string
	// PrincipalKey names who speaks, as the adapter authenticated them
	// (adapters never mint operator or system scope).
	PrincipalKey string
	Source       string
	ReplyTo      string
	Text         string
	// Metadata is free-form adapter metadata (JSON values); it never holds
	// credentials.
	Metadata map[string]any
	// Attachments are the files that came with the message, already
	// stored where the turn may read them (ctx.input.attachments).
	Attachments []InboundAttachment
}

// Inbound statuses. queued and retry_scheduled are due for a claim;
// claimed and running belong to one Host; done and dead_letter are final.
const (
	InboundQueued         = "queued"
	InboundClaimed        = "claimed"
	InboundRunning        = "running"
	InboundRetryScheduled = "retry_scheduled"
	InboundDone           = "done"
	InboundDeadLetter     = "dead_letter"
)

// Inbound results, recorded when an inbound is done.
const (
	InboundResultTurn      = "turn"      // a turn ran (whatever its outcome)
	InboundResultCommand   = "command"   // a channel command answered it
	InboundResultIgnored   = "ignored"   // nothing to do (blank text after normalisation)
	InboundResultCancelled = "cancelled" // the turn was interrupted: never replayed
	// InboundResultRecovered: a Host died after the turn was reserved; the
	// turn it had started stands (it was reconciled as lost or finished)
	// and is never run again.
	InboundResultRecovered = "recovered"
)

// Inbound is one row of the channel inbox.
type Inbound struct {
	ID string
	InboundEnvelope
	Status        string
	Attempts      int
	ClaimID       string
	HostID        string
	TurnID        string // reserved before the turn starts
	SessionID     string
	Result        string
	LastError     string
	NextAttemptAt time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// InboxReceipt is what accepting an envelope answered: the inbound's id and
// whether the envelope had been accepted before.
type InboxReceipt struct {
	InboundID string
	Duplicate bool
}

// ChannelState is the durable state of one running channel of one core,
// as its gateway last reported it (gateway status reads it from another
// process). LastError is already redacted.
type ChannelState struct {
	CoreID         string
	Channel        string
	Type           string
	HostID         string
	State          string // ChannelRunning, ChannelRetrying, ChannelStopped, ChannelDisabled
	LastError      string
	Cursor         string
	LeaseExpiresAt time.Time
	UpdatedAt      time.Time
}

// Channel states.
const (
	ChannelRunning  = "running"
	ChannelRetrying = "retrying"
	ChannelStopped  = "stopped"
	ChannelDisabled = "disabled"
)

// InboxCount is the number of inbounds of one channel in one status.
type InboxCount struct {
	CoreID  string
	Channel string
	Status  string
	Count   int
}

// ChannelCursor is a poller's source checkpoint (a Telegram offset),
// committed with the envelopes of its batch: the cursor of (CoreID,
// Channel) moves only if HostID holds that channel's poller lease.
type ChannelCursor struct {
	CoreID, Channel, HostID, Cursor string
}
