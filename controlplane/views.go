package controlplane

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// MaxSummaryChars bounds the summary of the model view.
const MaxSummaryChars = 1200

// statusEvent is the event type that put a task in each status and may
// carry its summary.
var statusEvent = map[string]string{
	demiurge.TaskBlocked:   demiurge.EvTaskBlocked,
	demiurge.TaskSucceeded: demiurge.EvTaskSucceeded,
	demiurge.TaskFailed:    demiurge.EvTaskFailed,
	demiurge.TaskCancelled: demiurge.EvTaskCancelled,
	demiurge.TaskLost:      demiurge.EvTaskLost,
}

// OperatorView is a task row with its summary and log tail.
type OperatorView struct {
	Task    demiurge.Task
	Summary string
	Logs    []LogLine // newest TailLines lines, at most TailChars of text
}

// Model is the model-facing view of a task: exactly task_id, kind,
// status, running, started_at, completed_at (RFC 3339 or nil) and summary
// (at most MaxSummaryChars, cut with a "..." marker).
func Model(task demiurge.Task, summary string) map[string]any {
	if len(summary) > MaxSummaryChars {
		summary = headBytes(summary, MaxSummaryChars-3) + "..."
	}
	return map[string]any{
		"task_id":      task.ID,
		"kind":         task.Kind,
		"status":       task.Status,
		"running":      Running(task.Status),
		"started_at":   timeOrNil(task.StartedAt),
		"completed_at": timeOrNil(task.CompletedAt),
		"summary":      summary,
	}
}

// Summary returns the summary of the event that put task in its current
// status, "" for queued and running tasks. The state machine lets each of
// those events happen at most once per task, so the first one is it.
func (cp *ControlPlane) Summary(ctx context.Context, task demiurge.Task) (string, error) {
	typ, ok := statusEvent[task.Status]
	if !ok {
		return "", nil
	}
	evs, err := cp.st.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggTask, AggregateID: task.ID, Type: typ, Limit: 1})
	if err != nil || len(evs) == 0 {
		return "", err
	}
	var end demiurge.TaskChange
	err = evs[0].Decode(&end)
	return end.Summary, err
}

// ModelView is Get followed by Model.
func (cp *ControlPlane) ModelView(ctx context.Context, scope demiurge.PrincipalScope, id string) (map[string]any, error) {
	tk, err := cp.Get(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	summary, err := cp.Summary(ctx, tk)
	if err != nil {
		return nil, err
	}
	return Model(tk, summary), nil
}

// Operator returns the operator view of task id, without owner checks:
// callers reach it only with the operator's authority.
func (cp *ControlPlane) Operator(ctx context.Context, id string) (OperatorView, error) {
	tk, err := cp.st.Task(ctx, id)
	if err != nil {
		return OperatorView{}, err
	}
	summary, err := cp.Summary(ctx, tk)
	if err != nil {
		return OperatorView{}, err
	}
	logs, err := cp.LogTail(ctx, id, TailLines)
	if err != nil {
		return OperatorView{}, err
	}
	return OperatorView{Task: tk, Summary: summary, Logs: boundChars(logs, TailChars)}, nil
}

// Get returns task id if scope may see it: the operator sees every task,
// any other scope the tasks whose owner session it is allowed. A task that
// is not visible is answered exactly like a missing one.
func (cp *ControlPlane) Get(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Task, error) {
	if err := scope.Validate(); err != nil {
		return demiurge.Task{}, err
	}
	tk, err := cp.st.Task(ctx, id)
	if err != nil {
		return demiurge.Task{}, err
	}
	if scope.Authority != demiurge.AuthorityOperator && (tk.OwnerSessionID == "" || !scope.Allows(tk.OwnerSessionID)) {
		return demiurge.Task{}, demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", id)
	}
	return tk, nil
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return demiurge.FormatTime(t)
}
