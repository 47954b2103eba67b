package demiurge

import (
	"encoding/json"
	"time"
)

// Event is one row of the runtime event log. The store assigns Seq; EventID and
// CreatedAt are filled in by the store when empty. Payload is the encoded JSON
// object of the event's typed payload (one EventPayload struct per Type, see
// events_*.go): NewEvent encodes it, Decode and DecodePayload read it. Actor is
// a JSON-compatible map (stored as sorted-key JSON).
type Event struct {
	Seq            int64
	EventID        string
	AggregateType  string
	AggregateID    string
	Type           string
	CreatedAt      time.Time
	Actor          map[string]any
	Payload        json.RawMessage
	IdempotencyKey string

	// body is the value NewEvent encoded as Payload (Body); encodeErr is
	// why it could not, and the store refuses the event (EncodeErr).
	body      EventPayload
	encodeErr error
}

// Expected is an optimistic-concurrency guard for Append: the append fails with
// ECONFLICT unless the newest event of the aggregate has sequence LastSeq
// (0 means "the aggregate has no events yet").
type Expected struct {
	AggregateType string
	AggregateID   string
	LastSeq       int64
}

// EventBatch is the input of one Append: events with their idempotency key
// and optional guard. Stores that write several batches in one transaction
// apply each as if it were appended alone.
type EventBatch struct {
	Events         []Event
	IdempotencyKey string
	Expected       *Expected
}

// Aggregate types.
const (
	AggTask           = "task"
	AggTaskCompletion = "task_completion"
	AggMCPServer      = "mcp_server" // id "<core>:<server>"
	AggDelivery       = "delivery"
	AggWork           = "work"
	AggSession        = "session"
	AggTurn           = "turn"
	AggMessage        = "message"
	AggArtifact       = "artifact"
	AggToolCall       = "tool_call"
	AggScheduler      = "scheduler"
	AggPrincipalScope = "principal_scope"
	AggHost           = "host"
)

// Aggregates of the audit trails without a projection: the delegation trail
// (agent_spawn "<task id>", or the parent turn id for a rejection) and the
// write-scope claims of background tasks (task_write_scope "<scope>").
const (
	AggAgentSpawn = "agent_spawn"
	AggWriteScope = "task_write_scope"
)

// Event types with a projection (spec host-runtime §1.5), plus the Go additions
// for restart reconciliation (turn.lost, host.*) and the audit trails. Each has
// its payload struct (EventPayloads lists them).
const (
	EvTaskSubmitted              = "task.submitted"
	EvTaskStarted                = "task.started"
	EvTaskSucceeded              = "task.succeeded"
	EvTaskFailed                 = "task.failed"
	EvTaskCancelled              = "task.cancelled"
	EvTaskLost                   = "task.lost"
	EvTaskBlocked                = "task.blocked"
	EvTaskLog                    = "task.log"
	EvTaskCompletionReady        = "task.completion_ready"
	EvTaskCompletionAcknowledged = "task.completion_acknowledged"
	// EvTaskCancelRequested asks the Host process running a task to cancel
	// it; EvTaskProcessRecorded names the process a task runs, so restart
	// recovery can end it (Go additions).
	EvTaskCancelRequested = "task.cancel_requested"
	EvTaskProcessRecorded = "task.process_recorded"
	// EvTaskWriteScopeClaimed claims a write scope for a background task
	// (aggregate task_write_scope): the claim's guard serialises submissions
	// that name the same scope.
	EvTaskWriteScopeClaimed = "task.write_scope_claimed"

	// An MCP server a turn could not use: its connect was denied, or it
	// failed (audit only; no projection).
	EvMCPServerDenied = "mcp.server_denied"
	EvMCPServerFailed = "mcp.server_failed"

	EvDeliveryQueued         = "delivery.queued"
	EvDeliverySending        = "delivery.sending"
	EvDeliverySent           = "delivery.sent"
	EvDeliveryFailed         = "delivery.failed"
	EvDeliveryRetryScheduled = "delivery.retry_scheduled"
	EvDeliveryUnknown        = "delivery.unknown"
	EvDeliveryUnrouted       = "delivery.unrouted"

	EvWorkEnqueued     = "work.enqueued"
	EvWorkClaimed      = "work.claimed"
	EvWorkRunning      = "work.running"
	EvWorkSending      = "work.sending"
	EvWorkHeartbeat    = "work.heartbeat"
	EvWorkSucceeded    = "work.succeeded"
	EvWorkFailed       = "work.failed"
	EvWorkCancelled    = "work.cancelled"
	EvWorkUnknown      = "work.unknown"
	EvWorkAcknowledged = "work.acknowledged"
	EvWorkCorrupt      = "work.corrupt"
	EvWorkRecovered    = "work.recovered"

	EvSessionCreated         = "session.created"
	EvSessionUpdated         = "session.updated"
	EvSessionResumed         = "session.resumed"
	EvSessionBindingRebound  = "session.binding.rebound"
	EvSessionBindingConflict = "session.binding_conflict"

	EvTurnStarted   = "turn.started"
	EvTurnCompleted = "turn.completed"
	EvTurnFailed    = "turn.failed"
	EvTurnCancelled = "turn.cancelled"
	EvTurnLost      = "turn.lost"

	EvMessagePersisted = "message.persisted"
	EvMessageUpdated   = "message.updated"
	EvArtifactStored   = "artifact.stored"

	EvToolCallStarted   = "tool.call.started"
	EvToolCallCompleted = "tool.call.completed"
	EvToolCallFailed    = "tool.call.failed"

	EvSchedulerScheduled = "scheduler.scheduled"
	EvSchedulerClaimed   = "scheduler.claimed"
	EvSchedulerCompleted = "scheduler.completed"
	EvSchedulerError     = "scheduler.error"

	EvPrincipalOwnerLookupDenied = "principal_scope.owner_lookup_denied"
	EvPrincipalOperatorIssued    = "principal_scope.operator_issued"

	EvHostStarted    = "host.started"
	EvHostStopped    = "host.stopped"
	EvHostReconciled = "host.reconciled"

	// The delegation trail (audit only).
	EvAgentSpawnStarted   = "agent_spawn.started"
	EvAgentSpawnCompleted = "agent_spawn.completed"
	EvAgentSpawnBlocked   = "agent_spawn.blocked"
	EvAgentSpawnFailed    = "agent_spawn.failed"
	EvAgentSpawnRejected  = "agent_spawn.rejected"
)
