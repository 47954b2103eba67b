package controlplane

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// consumeOwner is the claim owner of a completion a waiter consumes.
const consumeOwner = "host.task_worker.wait"

// heldRetry is how long a delivery that found its task held by a
// consuming waiter leaves the completion to that waiter.
const heldRetry = time.Second

// ConsumeCompletion marks the completion of task taskID as consumed by a
// caller that already has the task's result (yield_until): the completion
// is written if it was not yet, then claimed and acknowledged, so the
// OnCompletion function is not called for it. It returns nil when the task
// gets no completion (not terminal, no owner session, silent) or it was
// acknowledged already, and ECONFLICT "task completion <id> is being
// delivered" when a delivery holds its claim (it will be delivered).
func (w *Worker) ConsumeCompletion(ctx context.Context, taskID string) error {
	tk, err := w.cp.st.Task(ctx, taskID)
	if err != nil || !Notifies(tk) {
		return err
	}
	if err := w.cp.emitCompletion(ctx, tk); err != nil {
		return err
	}
	item, ok, err := w.st.TaskCompletion(ctx, taskID)
	if err != nil || !ok || item.Status == demiurge.WorkAcknowledged {
		return err
	}
	for attempt := 1; ; attempt++ {
		claimed, ok, err := w.st.ClaimWork(ctx, item.ID, consumeOwner, completionLease)
		if err != nil {
			return err
		}
		if ok {
			_, err = w.st.AcknowledgeTaskCompletion(ctx, claimed.ID, claimed.ClaimID)
			return err
		}
		// While a waiter holds the task, this worker's own delivery loop
		// may have claimed the completion a moment ago: it steps aside at
		// once (deliver), so the claim is tried again, briefly.
		if attempt == consumeAttempts || !w.held(taskID) {
			return demiurge.Errorf(demiurge.ECONFLICT, "task completion %s is being delivered", item.ID)
		}
		select {
		case <-ctx.Done():
			return ctxError(ctx, "consume task completion")
		case <-time.After(consumeRetryDelay):
		}
	}
}

// A consuming waiter's claim of a completion its own worker's delivery
// holds for a moment is tried consumeAttempts times, consumeRetryDelay
// apart.
const (
	consumeAttempts   = 50
	consumeRetryDelay = 10 * time.Millisecond
)

// WaitConsume is Wait for a caller that takes the task's result itself:
// while it waits, this worker neither writes nor delivers the task's
// completion, and once the task ended the completion is consumed
// (ConsumeCompletion). consumed is false when it could not be (a delivery
// got there first, or the wait ended early); a task that ended without
// being consumed is announced as usual, by the completion loop's next poll.
func (w *Worker) WaitConsume(ctx context.Context, id string) (tk demiurge.Task, consumed bool, err error) {
	w.mu.Lock()
	w.holds[id]++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.holds[id]--; w.holds[id] <= 0 {
			delete(w.holds, id)
		}
		w.mu.Unlock()
		if !consumed {
			signal(w.wake)
		}
	}()
	tk, err = w.Wait(ctx, id)
	if err != nil {
		return tk, false, err
	}
	if cerr := w.ConsumeCompletion(ctx, id); cerr != nil {
		w.log.Info("task worker: completion not consumed", "task_id", id, "code", demiurge.ErrorCode(cerr))
		return tk, false, nil
	}
	return tk, true, nil
}

// held reports whether a consuming waiter holds task id's completion.
func (w *Worker) held(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.holds[id] > 0
}
