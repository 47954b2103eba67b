package controlplane

import (
	"cmp"
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
	return cp.transition(ctx, id, demiurge.EvTaskStarted, map[string]any{}, false)
}

// Succeed ends a running or blocked task as succeeded.
func (cp *ControlPlane) Succeed(ctx context.Context, id, resultRef, summary string, metadata map[string]any) (demiurge.Task, error) {
	p := map[string]any{"summary": summary}
	if resultRef != "" {
		p["result_ref"] = resultRef
	}
	if len(metadata) > 0 {
		p["metadata"] = metadata
	}
	return cp.transition(ctx, id, demiurge.EvTaskSucceeded, p, false)
}

// Fail ends a running or blocked task as failed; errMsg is its summary and
// its error {message}.
func (cp *ControlPlane) Fail(ctx context.Context, id, errMsg string) (demiurge.Task, error) {
	return cp.transition(ctx, id, demiurge.EvTaskFailed,
		map[string]any{"summary": errMsg, "error": map[string]any{"message": errMsg}}, false)
}

// Cancel ends a non-terminal task as cancelled. A terminal task is returned
// unchanged and nothing is written.
func (cp *ControlPlane) Cancel(ctx context.Context, id, summary string) (demiurge.Task, error) {
	summary = cmp.Or(summary, DefaultCancelSummary)
	return cp.transition(ctx, id, demiurge.EvTaskCancelled,
		map[string]any{"summary": summary, "error": map[string]any{"message": summary}}, true)
}

// Block moves a running task to blocked_needs_user.
func (cp *ControlPlane) Block(ctx context.Context, id, summary string) (demiurge.Task, error) {
	return cp.transition(ctx, id, demiurge.EvTaskBlocked, map[string]any{"summary": summary}, false)
}

// transition appends one task event guarded by the aggregate's last seq,
// read before the task row: if anything is appended to the task between
// the check and the append, the guard fails and the check is repeated on
// the new state. So of two writers racing to end a task exactly one event
// is written. stickyOK returns a terminal task unchanged instead of
// refusing.
func (cp *ControlPlane) transition(ctx context.Context, id, event string, payload map[string]any, stickyOK bool) (demiurge.Task, error) {
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
		p := make(map[string]any, len(payload)+1)
		for k, v := range payload {
			p[k] = v
		}
		p["status"] = to
		_, err = cp.st.Append(ctx, []demiurge.Event{{
			AggregateType: demiurge.AggTask, AggregateID: id, Type: event,
			CreatedAt: cp.now(), Payload: p,
		}}, "", &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: id, LastSeq: seq})
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
