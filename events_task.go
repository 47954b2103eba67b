package demiurge

// TaskSource says who submitted a task and from where.
type TaskSource struct {
	Actor      string         `json:"actor"`
	SessionID  string         `json:"session_id"`
	TurnID     string         `json:"turn_id"`
	CoreID     string         `json:"core_id"`
	TaskID     string         `json:"task_id"`
	Metadata   map[string]any `json:"metadata"`
	WriteScope string         `json:"write_scope,omitempty"`
}

// TaskSubmittedPayload submits a task (aggregate task "<task id>"). Action
// is the submitted spec, kept in the event only.
type TaskSubmittedPayload struct {
	Kind           string         `json:"kind"`
	Status         string         `json:"status,omitempty"` // default queued
	RootTaskID     string         `json:"root_task_id,omitempty"`
	ParentTaskID   string         `json:"parent_task_id,omitempty"`
	OwnerSessionID string         `json:"owner_session_id,omitempty"`
	OwnerTurnID    string         `json:"owner_turn_id,omitempty"`
	CoreID         string         `json:"core_id,omitempty"`
	HostID         string         `json:"host_id,omitempty"`
	Source         *TaskSource    `json:"source,omitempty"`
	NotifyPolicy   string         `json:"notify_policy,omitempty"`
	ResultRef      string         `json:"result_ref,omitempty"`
	Error          *ErrorInfo     `json:"error,omitempty"`
	Action         map[string]any `json:"action"`
}

// TaskChange is the payload of the task transitions: Status defaults to
// the one the event type names; Summary and Metadata stay in the event.
type TaskChange struct {
	Status    string         `json:"status,omitempty"`
	Summary   string         `json:"summary,omitempty"`
	ResultRef string         `json:"result_ref,omitempty"`
	Error     *ErrorInfo     `json:"error,omitempty"`
	HostID    string         `json:"host_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// The task transitions, one type each over TaskChange.
type (
	TaskStartedPayload   TaskChange
	TaskSucceededPayload TaskChange
	TaskFailedPayload    TaskChange
	TaskCancelledPayload TaskChange
	TaskLostPayload      TaskChange
	TaskBlockedPayload   TaskChange
)

// As returns c as the payload of the task transition typ.
func (c TaskChange) As(typ string) (EventPayload, error) {
	switch typ {
	case EvTaskStarted:
		return TaskStartedPayload(c), nil
	case EvTaskSucceeded:
		return TaskSucceededPayload(c), nil
	case EvTaskFailed:
		return TaskFailedPayload(c), nil
	case EvTaskCancelled:
		return TaskCancelledPayload(c), nil
	case EvTaskLost:
		return TaskLostPayload(c), nil
	case EvTaskBlocked:
		return TaskBlockedPayload(c), nil
	}
	return nil, notOfFamily(typ, "task transition")
}

// TaskLogPayload is one log line of a task.
type TaskLogPayload struct {
	Stream string `json:"stream,omitempty"` // default stdout
	Text   string `json:"text"`
}

// TaskCancelRequestedPayload asks the Host running a task to cancel it.
type TaskCancelRequestedPayload struct {
	Reason      string `json:"reason,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
}

// TaskProcessRecordedPayload names the process a task runs (pid and start
// marker), so that restart recovery can end it.
type TaskProcessRecordedPayload struct {
	PID    int    `json:"pid"`
	Marker string `json:"marker"`
	HostID string `json:"host_id,omitempty"`
}

// TaskCompletionReadyPayload is the completion notice of a terminal task
// (aggregate task_completion "<work id>"); the task.completion work item
// carries the same object as its payload.
type TaskCompletionReadyPayload struct {
	TaskID         string         `json:"task_id"`
	Kind           string         `json:"kind"`
	OwnerSessionID string         `json:"owner_session_id"`
	OwnerTurnID    string         `json:"owner_turn_id"`
	SourceTool     string         `json:"source_tool"`
	Status         string         `json:"status"`
	Summary        string         `json:"summary"`
	LogTail        []string       `json:"log_tail"`
	ResultRef      string         `json:"result_ref"`
	Metadata       map[string]any `json:"metadata"`
	OriginScope    map[string]any `json:"origin_scope,omitempty"`
}

// TaskCompletionAcknowledgedPayload records that the completion WorkID of
// TaskID was handed over under ClaimID.
type TaskCompletionAcknowledgedPayload struct {
	TaskID  string `json:"task_id"`
	ClaimID string `json:"claim_id"`
	WorkID  string `json:"work_id"`
}

// TaskWriteScopeClaimedPayload claims the event's write scope (aggregate
// task_write_scope "<scope>") for TaskID.
type TaskWriteScopeClaimedPayload struct {
	TaskID string `json:"task_id"`
}

func (TaskSubmittedPayload) Type() string              { return EvTaskSubmitted }
func (TaskStartedPayload) Type() string                { return EvTaskStarted }
func (TaskSucceededPayload) Type() string              { return EvTaskSucceeded }
func (TaskFailedPayload) Type() string                 { return EvTaskFailed }
func (TaskCancelledPayload) Type() string              { return EvTaskCancelled }
func (TaskLostPayload) Type() string                   { return EvTaskLost }
func (TaskBlockedPayload) Type() string                { return EvTaskBlocked }
func (TaskLogPayload) Type() string                    { return EvTaskLog }
func (TaskCancelRequestedPayload) Type() string        { return EvTaskCancelRequested }
func (TaskProcessRecordedPayload) Type() string        { return EvTaskProcessRecorded }
func (TaskCompletionReadyPayload) Type() string        { return EvTaskCompletionReady }
func (TaskCompletionAcknowledgedPayload) Type() string { return EvTaskCompletionAcknowledged }
func (TaskWriteScopeClaimedPayload) Type() string      { return EvTaskWriteScopeClaimed }
