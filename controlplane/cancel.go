package controlplane

import (
	"cmp"
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// Bounds of the store poll of Wait (and of a Cancel carried out by another
// process): it starts fast, for tasks about to end, and backs off.
const (
	waitPollMin = 5 * time.Millisecond
	waitPollMax = 100 * time.Millisecond
)

// Cancel ends task id as cancelled (summary reason, default "task
// cancelled") and returns its terminal row; a task that already ended is
// returned unchanged. Concurrent Cancels, and a Cancel racing the task's
// own end, all return the same final task, and exactly one terminal event
// is written.
//
//   - A task this worker runs: its runner's context is cancelled and the
//     task ends cancelled with the runner's result metadata, once the runner
//     returned or after CancelGrace.
//   - A task no live worker runs (no host, or this worker's host): it is
//     cancelled in the store at once.
//   - A task of another Host process: a task.cancel_requested event is
//     written; that Host's worker sees it within its CancelPoll and cancels
//     the task the same way, and Cancel waits for the terminal row. If that
//     Host is gone, the task ends lost once restart reconciliation runs.
//
// Waiting is bounded by ctx (ETIMEOUT/ECANCELED, with the task as last
// read). ENOTFOUND "task not found: <id>" for a missing task.
func (w *Worker) Cancel(ctx context.Context, id, reason string) (demiurge.Task, error) {
	reason = cmp.Or(reason, DefaultCancelSummary)
	w.mu.Lock()
	w.took = true // a task it ends has a completion to announce
	w.mu.Unlock()
	if r := w.lookup(id); r != nil {
		if tk, ok, err := w.cancelLocal(ctx, r, reason); ok {
			return tk, err
		}
	}
	tk, err := w.cp.st.Task(ctx, id)
	if err != nil || demiurge.TaskTerminal(tk.Status) {
		return tk, err
	}
	if tk.HostID == "" || tk.HostID == w.opts.HostID {
		return w.cancelInStore(ctx, id, reason)
	}
	ev := demiurge.NewEvent(demiurge.AggTask, id, demiurge.TaskCancelRequestedPayload{Reason: reason, RequestedBy: w.opts.HostID})
	ev.CreatedAt = w.cp.now()
	if _, err := w.cp.st.Append(ctx, []demiurge.Event{ev}, "", nil); err != nil {
		return tk, err
	}
	return w.Wait(ctx, id)
}

// cancelLocal cancels a run of this worker and waits for its end. ok is
// false when the run's submission was aborted: the store decides then.
func (w *Worker) cancelLocal(ctx context.Context, r *run, reason string) (demiurge.Task, bool, error) {
	select {
	case <-r.ready:
	case <-ctx.Done():
		return demiurge.Task{}, true, ctxError(ctx, "cancel task "+r.id)
	}
	if !r.isLaunched() {
		return demiurge.Task{}, false, nil
	}
	w.requestCancel(r, reason)
	tk, err := w.waitRun(ctx, r)
	return tk, true, err
}

// cancelInStore cancels a task that nothing runs and emits its completion.
func (w *Worker) cancelInStore(ctx context.Context, id, reason string) (demiurge.Task, error) {
	tk, err := w.cp.Cancel(ctx, id, reason)
	if err != nil {
		return tk, err
	}
	if err := w.cp.emitCompletion(ctx, tk); err != nil {
		w.log.Warn("task worker: completion not enqueued", "task_id", id,
			"code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
	}
	signal(w.wake)
	return tk, nil
}

// Wait returns task id once it is terminal: at once for a task that ended,
// on the run's end for a task this worker runs, else by polling the store
// (tasks of other processes). It fails with ENOTFOUND for a missing task and
// ETIMEOUT/ECANCELED, with the task as last read, when ctx ends first.
func (w *Worker) Wait(ctx context.Context, id string) (demiurge.Task, error) {
	if r := w.lookup(id); r != nil {
		select {
		case <-r.ready:
		case <-ctx.Done():
			return demiurge.Task{}, ctxError(ctx, "wait for task "+id)
		}
		if r.isLaunched() {
			return w.waitRun(ctx, r)
		}
	}
	delay := waitPollMin
	for {
		tk, err := w.cp.st.Task(ctx, id)
		if err != nil && ctx.Err() != nil {
			return w.timedOut(ctx, id)
		}
		if err != nil || demiurge.TaskTerminal(tk.Status) {
			return tk, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return tk, ctxError(ctx, "wait for task "+id)
		case <-t.C:
		}
		delay = min(2*delay, waitPollMax)
	}
}

func (w *Worker) waitRun(ctx context.Context, r *run) (demiurge.Task, error) {
	select {
	case <-r.done:
		return r.final, r.finalErr
	case <-ctx.Done():
		return w.timedOut(ctx, r.id)
	}
}

// timedOut answers a wait whose ctx ended: the task as it is now, with the
// coded ctx error.
func (w *Worker) timedOut(ctx context.Context, id string) (demiurge.Task, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	tk, _ := w.cp.st.Task(rctx, id)
	return tk, ctxError(ctx, "wait for task "+id)
}

func (w *Worker) lookup(id string) *run {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[id]
}

// cancelLoop carries out the cancel requests other processes wrote for
// tasks of this worker's Host: at once on a wake-up, and every CancelPoll.
func (w *Worker) cancelLoop() {
	defer w.loops.Done()
	requested, stop := w.subscribe(demiurge.TopicCancel(w.opts.HostID))
	defer stop()
	t := time.NewTicker(w.opts.CancelPoll)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		case <-requested:
		}
		reqs, err := w.st.TaskCancelRequests(w.ctx, w.opts.HostID)
		if err != nil {
			if w.ctx.Err() == nil {
				w.log.Warn("task worker: cancel requests not read", "code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
			}
			continue
		}
		for id, reason := range reqs {
			w.carryOut(id, reason)
		}
	}
}

// carryOut starts the cancel of one requested task without waiting for it:
// the requester waits on the store. An empty reason needs no default here:
// terminalEvent and ControlPlane.Cancel both apply DefaultCancelSummary.
func (w *Worker) carryOut(id, reason string) {
	if r := w.lookup(id); r != nil {
		select {
		case <-r.ready:
		default:
			return // still being submitted: the next poll sees it
		}
		if r.isLaunched() {
			w.requestCancel(r, reason)
			return
		}
	}
	// Stamped with this Host but not running here (never started by a
	// worker, or already ended): nothing to stop, so end it in the store.
	ctx, cancel := w.writeCtx()
	defer cancel()
	if _, err := w.cancelInStore(ctx, id, reason); err != nil {
		w.log.Warn("task worker: requested cancel failed", "task_id", id, "code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
	}
}
