package controlplane

import (
	"context"
	"maps"

	"github.com/demiurge/demiurge"
)

// NotifyPolicySilent is the notify_policy that suppresses a task's
// completion notification.
const NotifyPolicySilent = "silent"

// Notifies reports whether a task in its current state gets a completion
// notification: it is in a completion status (terminal, or blocked on the
// user), has an owner session, and its notify_policy is not "silent".
func Notifies(tk demiurge.Task) bool {
	completion := demiurge.TaskTerminal(tk.Status) || tk.Status == demiurge.TaskBlocked
	return completion && tk.OwnerSessionID != "" && tk.NotifyPolicy != NotifyPolicySilent
}

// emitCompletion writes the completion notification of a terminal task
// (spec host-runtime §1.7), if it gets one: task.completion_ready on
// aggregate task_completion/<task_event_…> and the task.completion work
// item with the same id (parent_work_id the task), in one append with the
// idempotency key "task:<task_id>:completion_ready", so a task gets at most
// one completion however many writers try.
func (cp *ControlPlane) emitCompletion(ctx context.Context, tk demiurge.Task) error {
	if !Notifies(tk) {
		return nil
	}
	p, err := cp.completionPayload(ctx, tk)
	if err != nil {
		return err
	}
	id := demiurge.NewID("task_event")
	ready := demiurge.NewEvent(demiurge.AggTaskCompletion, id, p)
	work := demiurge.NewEvent(demiurge.AggWork, id, demiurge.WorkEnqueuedPayload{
		Kind: demiurge.WorkKindTaskCompletion, OwnerSessionID: tk.OwnerSessionID,
		OwnerTurnID: tk.OwnerTurnID, ParentWorkID: tk.ID, Payload: p,
	})
	now := cp.now()
	ready.CreatedAt, ready.Actor, work.CreatedAt = now, map[string]any{"actor": "host.task_worker"}, now
	_, err = cp.st.Append(ctx, []demiurge.Event{ready, work}, "task:"+tk.ID+":completion_ready", nil)
	return err
}

// completionPayload is {task_id, kind, owner_session_id, owner_turn_id,
// source_tool, status, summary, log_tail, result_ref, metadata,
// origin_scope?}: metadata is the submission's action.metadata merged with
// the terminal event's, the log tail the operator tail's lines.
func (cp *ControlPlane) completionPayload(ctx context.Context, tk demiurge.Task) (demiurge.TaskCompletionReadyPayload, error) {
	// One read of the task's few events: a read by event type would walk
	// that type's index across every task.
	evs, err := cp.st.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggTask, AggregateID: tk.ID, Limit: demiurge.MaxEventLimit})
	if err != nil {
		return demiurge.TaskCompletionReadyPayload{}, err
	}
	var action map[string]any
	var end demiurge.TaskChange
	seenAction, seenEnd := false, false
	for _, e := range evs {
		switch {
		case e.Type == demiurge.EvTaskSubmitted && !seenAction:
			sub, err := demiurge.DecodePayload[demiurge.TaskSubmittedPayload](e)
			if err != nil {
				return demiurge.TaskCompletionReadyPayload{}, err
			}
			action, seenAction = sub.Action, true
		case e.Type == statusEvent[tk.Status] && !seenEnd:
			if err := e.Decode(&end); err != nil {
				return demiurge.TaskCompletionReadyPayload{}, err
			}
			seenEnd = true
		}
	}
	meta := map[string]any{}
	if m, ok := action["metadata"].(map[string]any); ok {
		maps.Copy(meta, m)
	}
	maps.Copy(meta, end.Metadata)
	logs, err := cp.LogTail(ctx, tk.ID, TailLines)
	if err != nil {
		return demiurge.TaskCompletionReadyPayload{}, err
	}
	tail := []string{}
	for _, l := range boundChars(logs, TailChars) {
		tail = append(tail, l.Text)
	}
	p := demiurge.TaskCompletionReadyPayload{
		TaskID: tk.ID, Kind: tk.Kind, OwnerSessionID: tk.OwnerSessionID, OwnerTurnID: tk.OwnerTurnID,
		SourceTool: str(action, "source_tool"), Status: tk.Status, Summary: end.Summary,
		LogTail: tail, ResultRef: tk.ResultRef, Metadata: meta,
	}
	if origin, ok := action["origin_scope"].(map[string]any); ok {
		p.OriginScope = origin
	}
	return p, nil
}

// missingPages bounds one pass over the tasks awaiting a completion.
const (
	missingPage  = 100
	missingPages = 20
)

// emitMissingCompletions emits the completions terminal tasks should have
// but do not: a crash between a task's end and its completion, a task
// ended lost by restart reconciliation or cancelled outside a worker.
func (w *Worker) emitMissingCompletions(ctx context.Context) error {
	var first error
	for range missingPages {
		tasks, err := w.st.TasksAwaitingCompletion(ctx, missingPage)
		if err != nil {
			return err
		}
		failed := 0
		for _, tk := range tasks {
			if w.held(tk.ID) {
				failed++ // left to its consuming waiter
				continue
			}
			if err := w.cp.emitCompletion(ctx, tk); err != nil {
				failed++
				if first == nil {
					first = err
				}
			}
		}
		// A page that failed or was held whole would come back unchanged.
		if len(tasks) < missingPage || failed == len(tasks) {
			break
		}
	}
	return first
}
