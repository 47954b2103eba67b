package controlplane

import (
	"context"
	"strings"

	"github.com/demiurge/demiurge"
)

// submitTask is SubmitTask through the worker's group commit. With start
// the worker runs the task at once: the task.submitted and task.started
// events (and the write-scope claim, if any) go in one append, so a run
// costs one write transaction before its runner starts. Without it the
// task stays queued for a Host to claim. It returns the task, the seq of
// its last event, and whether this call created it (false: an idempotent
// replay of an earlier submission, returned as it is now).
func (w *Worker) submitTask(ctx context.Context, id string, spec demiurge.TaskSpec, src demiurge.TaskOrigin, start bool) (demiurge.Task, int64, bool, error) {
	cp := w.cp
	if err := checkKind(spec.Kind); err != nil {
		return demiurge.Task{}, 0, false, err
	}
	key := submitKey(spec, id)
	scope := strings.TrimSpace(src.WriteScope)
	sub := cp.submittedEvent(id, spec, src, scope)
	sub.EventID = demiurge.NewID("evt")
	started := demiurge.NewEvent(demiurge.AggTask, id, demiurge.TaskStartedPayload{Status: demiurge.TaskRunning, HostID: w.opts.HostID})
	started.CreatedAt = sub.CreatedAt
	exists := func() (demiurge.Task, bool, error) {
		existing, err := cp.st.Task(ctx, id)
		if err == nil {
			tk, err := cp.replay(ctx, []demiurge.Event{sub}, key, existing.ID, demiurge.Errorf(demiurge.ECONFLICT, "task already exists: %s", id))
			return tk, true, err
		}
		if demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
			return demiurge.Task{}, true, err
		}
		return demiurge.Task{}, false, nil
	}
	for range submitAttempts {
		events := []demiurge.Event{sub}
		if start {
			events = append(events, started)
		}
		// Without a scope the guard expects the task to have no events, so
		// an existing id fails the append and is looked at only then.
		guard := &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: id}
		if scope != "" {
			if tk, found, err := exists(); found {
				return tk, 0, false, err
			}
			claim, scopeGuard, tk, held, err := cp.claimScope(ctx, id, key, scope, sub)
			if held || err != nil {
				return tk, 0, false, err
			}
			events, guard = append(events, claim), scopeGuard
		}
		stored, tk, err := w.appendTask(ctx, demiurge.EventBatch{Events: events, IdempotencyKey: key, Expected: guard})
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			if tk, found, err := exists(); found {
				return tk, 0, false, err
			}
			continue // another submission took the scope first: look again
		}
		if err != nil {
			return demiurge.Task{}, 0, false, err
		}
		if stored[0].EventID != sub.EventID { // the key was stored before: a replay
			return tk, 0, false, nil
		}
		last := 0 // the task's own last event: the scope claim, if any, comes after
		if start {
			last = 1
		}
		return tk, stored[last].Seq, true, nil
	}
	return demiurge.Task{}, 0, false, demiurge.Errorf(demiurge.ECONFLICT, "task submission kept losing races: %s", id)
}
