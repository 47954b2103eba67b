package controlplane

import (
	"context"

	"github.com/demiurge/demiurge"
)

// transitionAttempts bounds the retries of a transition whose guard failed
// because the aggregate moved (a log line, or another writer).
const transitionAttempts = 16

// DefaultCancelSummary is the summary of a cancel that gives none.
const DefaultCancelSummary = "task cancelled"

// MarkStarted moves a queued task to running.
func (cp *ControlPlane) MarkStarted(ctx context.Context, id string) (demiurge.Task, error) {
	return cp.transition(ctx, id, demiurge.EvTaskStarted, demiurge.TaskChange{}, false)
}

// Succeed ends a running or blocked task as succeeded.
func (cp *ControlPlane) Succeed(ctx context.Context, id, resultRef, summary string, metadata map[string]any) (demiurge.Task, error) {
	c := demiurge.TaskChange{Summary: summary, ResultRef: resultRef}
	if len(metadata) > 0 {
		c.Metadata = metadata
	}
	return cp.transition(ctx, id, demiurge.EvTaskSucceeded, c, false)
}

// Fail ends a running or blocked task as failed; errMsg is its summary and
// its error {message}.
func (cp *ControlPlane) Fail(ctx context.Context, id, errMsg string) (demiurge.Task, error) {
	return cp.transition(ctx, id, demiurge.EvTaskFailed,
		demiurge.TaskChange{Summary: errMsg, Error: &demiurge.ErrorInfo{Message: errMsg}}, false)
}

// Cancel ends a non-terminal task as cancelled. A terminal task is returned
// unchanged and nothing is written.
func (cp *ControlPlane) Cancel(ctx context.Context, id, summary string) (demiurge.Task, error) {
	if summary == "" {
		summary = DefaultCancelSummary
	}
	return cp.transition(ctx, id, demiurge.EvTaskCancelled,
		demiurge.TaskChange{Summary: summary, Error: &demiurge.ErrorInfo{Message: summary}}, true)
}

// Block moves a running task to blocked_needs_user.
func (cp *ControlPlane) Block(ctx context.Context, id, summary string) (demiurge.Task, error) {
	return cp.transition(ctx, id, demiurge.EvTaskBlocked, demiurge.TaskChange{Summary: summary}, false)
}

// transition appends one task event guarded by the aggregate's last seq,
// read before the task row: if anything is appended to the task between
// the check and the append, the guard fails and the check is repeated on
// the new state. So of two writers racing to end a task exactly one event
// is written. stickyOK returns a terminal task unchanged instead of
// refusing.
func (cp *ControlPlane) transition(ctx context.Context, id, event string, change demiurge.TaskChange, stickyOK bool) (demiurge.Task, error) {
	for range transitionAttempts {
		seq, err := cp.st.LastSeq(ctx, demiurge.AggTask, id)
		if err != nil {
			return demiurge.Task{}, err
		}
		tk, err := cp.st.Task(ctx, id)
		if err != nil {
			return demiurge.Task{}, err
		}
		to, ok := Transition(tk.Status, event)
		if !ok {
			if stickyOK && demiurge.TaskTerminal(tk.Status) {
				return tk, nil
			}
			return tk, demiurge.Errorf(demiurge.ECONFLICT, "task %s cannot move from %s by %s", id, tk.Status, event)
		}
		change.Status = to
		ev, err := taskEvent(id, event, change)
		if err != nil {
			return demiurge.Task{}, err
		}
		ev.CreatedAt = cp.now()
		_, err = cp.st.Append(ctx, []demiurge.Event{ev}, "", &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: id, LastSeq: seq})
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			continue
		}
		if err != nil {
			return demiurge.Task{}, err
		}
		return cp.st.Task(ctx, id)
	}
	return demiurge.Task{}, demiurge.Errorf(demiurge.ECONFLICT, "task %s kept changing during %s", id, event)
}

// taskEvent is the task transition event of task id.
func taskEvent(id, event string, c demiurge.TaskChange) (demiurge.Event, error) {
	p, err := c.As(event)
	if err != nil {
		return demiurge.Event{}, err
	}
	return demiurge.NewEvent(demiurge.AggTask, id, p), nil
}
