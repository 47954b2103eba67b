package demiurge

import "time"

// This file holds the query windows of the store port; every list is
// bounded and newest-first. The engines fill these filters and the
// RuntimeStore adapter serves them, so neither imports the other: a filter's
// zero value is always a valid, bounded query.
//
// A Limit ≤ 0 means the Default*Limit of the list; a larger one is capped at
// its Max*Limit. The windows are newest first, except where a type says
// otherwise (the event stream reads forwards from a cursor; a message window
// is the newest messages, returned in transcript order).

// Limits of the session list.
const (
	DefaultSessionLimit = 20
	MaxSessionLimit     = 1000
)

// Limits of a message window.
const (
	DefaultMessageLimit = 50
	MaxMessageLimit     = 1000
)

// Limits of the outbox list.
const (
	DefaultDeliveryLimit = 50
	MaxDeliveryLimit     = 1000
)

// Limits of the task list.
const (
	DefaultTaskLimit = 50
	MaxTaskLimit     = 1000
)

// Limits of one read of the event stream.
const (
	DefaultEventLimit = 100
	MaxEventLimit     = 1000
)

// SessionFilter selects sessions, newest first (updated_at).
type SessionFilter struct {
	CoreID string // "" for every core
	// Scope, when set, limits the result to sessions the scope may see:
	// for the operator every session with a non-legacy owner row, for any
	// other scope the sessions in Scope.AllowedSessionIDs.
	Scope *PrincipalScope
	Limit int // default DefaultSessionLimit, at most MaxSessionLimit
}

// MessageFilter selects a window of one session's transcript: the newest
// Limit messages that match, returned in transcript order (Seq ascending).
// The two cursors bound the window on both sides; they never widen it.
type MessageFilter struct {
	Limit            int   // window size; default DefaultMessageLimit, at most MaxMessageLimit
	BeforeSeq        int64 // only messages with Seq < BeforeSeq (0: no upper bound); pages further back
	AfterSeq         int64 // only messages with Seq > AfterSeq (0: no lower bound); e.g. a compaction cutoff
	ModelVisibleOnly bool  // only messages whose content is model-visible
	Kind             string
	Roles            []string
}

// DeliveryFilter selects outbox rows, newest first. Empty fields do not
// filter.
type DeliveryFilter struct {
	TurnID string
	Status string
	Limit  int // default DefaultDeliveryLimit, at most MaxDeliveryLimit
}

// TaskFilter selects tasks, newest first. Empty fields do not filter.
type TaskFilter struct {
	Status         string
	Kind           string
	OwnerSessionID string
	ParentTaskID   string
	Limit          int // default DefaultTaskLimit, at most MaxTaskLimit
}

// EventFilter selects a page of the event stream. Unlike the other lists it
// reads forwards: events with Seq > AfterSeq in Seq order, so paging with
// AfterSeq = the last Seq returned visits every event once. Empty fields do
// not filter.
type EventFilter struct {
	AggregateType string
	AggregateID   string
	Type          string
	AfterSeq      int64 // cursor: only events with Seq > AfterSeq
	Limit         int   // default DefaultEventLimit, at most MaxEventLimit
}

// Durable work kinds.
const (
	WorkKindDeliverySend   = "delivery.send"
	WorkKindScheduleFire   = "schedule.fire"
	WorkKindTaskCompletion = "task.completion"
)

// WorkHeartbeat is the pseudo-status a work transition accepts to extend a
// claim's lease without changing its status.
const WorkHeartbeat = "heartbeat"

// DefaultWorkLease is the lease a work claim or heartbeat gets when none is
// given.
const DefaultWorkLease = 60 * time.Second

// WorkFields carries the optional values of a work transition.
type WorkFields struct {
	ExternalRef string        // succeeded: reference of the external effect
	LastError   string        // failed, unknown, cancelled
	RetryAt     time.Time     // failed: when set, the item is retry_scheduled instead of failed
	Lease       time.Duration // running, sending, heartbeat: extend the lease by this much (heartbeat default DefaultWorkLease)
}

// OwnerLegacyLocal is the owner kind of a session created without a
// principal scope. No scope, not even the operator's, owns such a session.
const OwnerLegacyLocal = "legacy_local"

// Reasons of the audit event principal_scope.owner_lookup_denied.
const (
	DeniedNotFound      = "not_found"
	DeniedMissingOwner  = "missing_durable_owner"
	DeniedLegacyOwner   = "legacy_owner_requires_repair"
	DeniedNotAuthorized = "not_authorized"
)
