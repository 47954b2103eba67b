package demiurge

// Task kinds the control plane accepts.
const (
	TaskKindAgentSpawn   = "agent.spawn"
	TaskKindTerminalExec = "terminal.exec"
	TaskKindEvolverRun   = "evolver.run"
	TaskKindScheduleFire = "schedule.fire"
)

// TaskActive reports whether a task in status has not ended: queued,
// running or blocked_needs_user (the "running" predicate of the task views).
func TaskActive(status string) bool {
	return status == TaskQueued || status == TaskRunning || status == TaskBlocked
}

// TaskSpec is what a detached task is to run.
type TaskSpec struct {
	Kind           string
	Payload        map[string]any // kept whole as the event's action; task_id, parent_task_id, root_task_id, owner_session_id, owner_turn_id, notify_policy are read from it
	IdempotencyKey string         // default "task:<id>:submitted"
}

// TaskOrigin says who submits a task and from where.
type TaskOrigin struct {
	Actor     string
	SessionID string
	TurnID    string
	CoreID    string
	TaskID    string // the submitting task, if any: it becomes the parent
	HostID    string
	Metadata  map[string]any
	// WriteScope, when non-empty, is exclusive among active tasks
	// (queued, running, blocked_needs_user).
	WriteScope string
}

// TaskResult is what the runner of a task reports about the task it ran.
type TaskResult struct {
	Summary   string
	ResultRef string
	// Metadata (exit_code, exit_reason, ...) is written in the task's
	// terminal event, also when the task ends cancelled.
	Metadata map[string]any
	// Failed ends the task failed with Error (default "task failed") as its
	// error; otherwise, with a nil error, the task succeeds.
	Failed bool
	Error  string
	// Blocked leaves the task blocked_needs_user (event task.blocked with
	// Summary, ResultRef and Metadata) instead of ending it: the work needs
	// the user, and nothing of the worker runs it further. It gets its
	// completion notification like an ended task; a later cancel ends it.
	Blocked bool
}

// StartedTask is a queued task a Host has claimed and started: its row,
// the seq of its task.started event (the guard of its next event), and
// the action it was submitted with (TaskSpec.Payload).
type StartedTask struct {
	Task   Task
	Seq    int64
	Action map[string]any
}
