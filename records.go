package demiurge

import "time"

// Session statuses.
const SessionActive = "active"

// Session is the projection of one conversation with one core.
type Session struct {
	ID              string
	CoreID          string
	Status          string
	Channel         string
	ConversationKey string
	Workspace       string
	Provider        string
	Model           string
	Title           string
	Preview         string
	MessageCount    int
	// MessageEdits counts message.updated edits of the session's messages.
	MessageEdits int64
	CoreRevision string
	Metadata     map[string]any
	// BootstrapContext is the bootstrap snapshot; BootstrapInitialized reports
	// whether the bootstrap phase has run for this session.
	BootstrapContext     string
	BootstrapInitialized bool
	// CompactedUntilMessageID is the last message a compaction summary
	// (CompactionSummaryID) replaces; CompactedUntilSeq is its Seq, fixed
	// when the cutoff is set. Context history starts after it (0: no cutoff).
	CompactionSummaryID     string
	CompactedUntilMessageID string
	CompactedUntilSeq       int64

	Owner     SessionOwner
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SessionOwner is the immutable owner row of a session.
type SessionOwner struct {
	Kind            string // an Authority value, or "legacy_local"
	PrincipalID     string
	Channel         string
	ConversationKey string
	OriginSessionID string
	OriginTurnID    string
}

// TurnStatus is the status of a turn. A started turn ends in exactly one
// terminal status.
type TurnStatus string

// Turn statuses.
const (
	TurnRunning   TurnStatus = "running"
	TurnCompleted TurnStatus = "completed"
	TurnNeedsUser TurnStatus = "needs_user"
	TurnFailed    TurnStatus = "failed"
	TurnCancelled TurnStatus = "cancelled"
	TurnLost      TurnStatus = "lost"
)

// TurnTerminal reports whether status is a terminal turn status.
func TurnTerminal(status TurnStatus) bool {
	switch status {
	case TurnCompleted, TurnNeedsUser, TurnFailed, TurnCancelled, TurnLost:
		return true
	}
	return false
}

// Turn is the projection of one turn.
type Turn struct {
	ID           string
	SessionID    string
	Status       TurnStatus
	CoreID       string
	CoreRevision string
	HostID       string
	ResultRef    string
	Error        map[string]any
	CreatedAt    time.Time
	CompletedAt  time.Time
	// Usage is the provider usage of the turn's model steps; ModelSteps
	// counts the steps whose usage was recorded.
	Usage      Usage
	ModelSteps int64
}

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleTool      = "tool"
)

// Message is one persisted session message. Seq is the runtime event sequence
// that persisted it and orders the transcript.
type Message struct {
	ID        string
	SessionID string
	TurnID    string
	Role      string
	Visible   bool
	Content   MessageContent
	CreatedAt time.Time
	Seq       int64
}

// MessageContent is the content_json of a message.
type MessageContent struct {
	Text         string         `json:"text"`
	Kind         string         `json:"kind"` // "message", "compaction_summary", ...
	ModelVisible bool           `json:"model_visible"`
	Channel      string         `json:"channel,omitempty"`
	Source       string         `json:"source,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// ToolCallRecord is the projection of one tool call.
type ToolCallRecord struct {
	CallID      string
	TurnID      string
	StepID      string
	ToolName    string
	Status      string
	Args        map[string]any
	Result      map[string]any
	CreatedAt   time.Time
	CompletedAt time.Time
}

// Delivery (outbox) statuses.
const (
	DeliveryQueued   = "queued"
	DeliverySending  = "sending"
	DeliverySent     = "sent"
	DeliveryFailed   = "failed"
	DeliveryUnknown  = "unknown"
	DeliveryUnrouted = "unrouted"
	DeliveryRetry    = "retry_scheduled"
)

// Delivery is one outbox row.
type Delivery struct {
	ID             string
	OwnerTurnID    string
	Channel        string
	Target         map[string]any
	Status         string
	IdempotencyKey string
	Payload        map[string]any
	Attempts       int
	LastError      string
	CreatedAt      time.Time
	SentAt         time.Time
}

// Task statuses.
const (
	TaskQueued    = "queued"
	TaskRunning   = "running"
	TaskBlocked   = "blocked_needs_user"
	TaskSucceeded = "succeeded"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	TaskLost      = "lost"
)

// TaskTerminal reports whether status is a terminal task status.
func TaskTerminal(status string) bool {
	switch status {
	case TaskSucceeded, TaskFailed, TaskCancelled, TaskLost:
		return true
	}
	return false
}

// Task is the projection of one detached task.
type Task struct {
	ID             string
	Kind           string
	Status         string
	RootTaskID     string
	ParentTaskID   string
	OwnerSessionID string
	OwnerTurnID    string
	CoreID         string
	HostID         string
	Source         map[string]any
	NotifyPolicy   string
	ResultRef      string
	Error          map[string]any
	CreatedAt      time.Time
	StartedAt      time.Time
	CompletedAt    time.Time
	HeartbeatAt    time.Time
}

// TaskLogLine is one retained line of a task's bounded log. Seq orders the
// lines of all tasks; a task keeps only its newest lines.
type TaskLogLine struct {
	Seq       int64
	Stream    string // stdout or stderr
	Text      string
	CreatedAt time.Time
}

// Durable work item statuses.
const (
	WorkQueued         = "queued"
	WorkRetryScheduled = "retry_scheduled"
	WorkClaimed        = "claimed"
	WorkRunning        = "running"
	WorkSending        = "sending"
	WorkSucceeded      = "succeeded"
	WorkFailed         = "failed"
	WorkCancelled      = "cancelled"
	WorkAcknowledged   = "acknowledged"
	WorkUnknown        = "unknown"
	WorkCorrupt        = "corrupt"
)

// WorkItem is one durable work item.
type WorkItem struct {
	ID             string
	Kind           string
	Status         string
	OwnerSessionID string
	OwnerTurnID    string
	ParentWorkID   string
	ClaimID        string
	OwnerID        string
	ClaimedAt      time.Time
	LeaseExpiresAt time.Time
	Attempts       int
	NextAttemptAt  time.Time
	LastError      string
	ExternalRef    string
	Payload        map[string]any
	CreatedAt      time.Time
	UpdatedAt      time.Time
	CompletedAt    time.Time
}

// Artifact is one stored artifact row.
type Artifact struct {
	ID          string
	OwnerTurnID string
	Kind        string
	URI         string
	Metadata    map[string]any
	CreatedAt   time.Time
}
