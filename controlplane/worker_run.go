package controlplane

import (
	"cmp"
	"context"
	"maps"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// run is the live state of one task this worker runs. It is registered
// before the task is submitted, so a Cancel that finds the task in the
// store also finds it here; ready is closed once the submission is settled
// (launched, or aborted because it failed or was a replay).
type run struct {
	id     string
	ctx    context.Context // the runner's context
	cancel context.CancelFunc
	ready  chan struct{}
	done   chan struct{} // closed after the terminal event and the completion are written

	mu              sync.Mutex // guards the fields below
	launched        bool
	handle          *Handle
	status          string // the task's status as this worker last wrote it
	seq             int64  // the task aggregate's last seq as this worker last saw it; 0 unknown
	cancelRequested bool
	cancelReason    string
	finalizing      bool

	// Set before done is closed, read after.
	final    demiurge.Task
	finalErr error
}

func (r *run) isLaunched() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.launched
}

// state returns the status and seq the worker last wrote.
func (r *run) state() (string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.seq
}

// moved records the worker's own append to the task aggregate. seq 0
// forgets the seq: the next guarded write reads it again.
func (r *run) moved(status string, seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if status != "" {
		r.status = status
	}
	r.seq = seq
}

// outcome is how a runner ended, or that it did not return in time.
type outcome struct {
	res      demiurge.TaskResult
	err      error
	timedOut bool // cancelled and not returned within CancelGrace
}

// execute runs the runner of a launched task and ends the task.
func (w *Worker) execute(r *run, runner Runner, tk demiurge.Task) {
	defer w.tasks.Done()
	res, err := callRunner(runner, r.ctx, tk, r.handle)
	w.finalize(r, outcome{res: res, err: err})
}

// callRunner calls runner, turning a panic into an error.
func callRunner(runner Runner, ctx context.Context, tk demiurge.Task, h *Handle) (res demiurge.TaskResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = demiurge.Errorf(demiurge.EINTERNAL, "task runner panicked")
		}
	}()
	return runner(ctx, tk, h)
}

// requestCancel asks a launched run to stop: the runner's context is
// cancelled and its task will end cancelled. If the runner has not returned
// within CancelGrace, a watchdog ends the task without its result. Only the
// first request counts.
func (w *Worker) requestCancel(r *run, reason string) {
	r.mu.Lock()
	if r.finalizing || r.cancelRequested {
		r.mu.Unlock()
		return
	}
	r.cancelRequested, r.cancelReason = true, reason
	r.mu.Unlock()
	r.cancel()
	w.tasks.Add(1)
	go func() {
		defer w.tasks.Done()
		t := time.NewTimer(w.opts.CancelGrace)
		defer t.Stop()
		select {
		case <-r.done:
		case <-t.C:
			w.finalize(r, outcome{timedOut: true})
		}
	}()
}

// finalize ends a run exactly once: whichever of the runner's return and
// the cancel watchdog comes first writes the terminal event. Order: the
// log is flushed, the terminal event (carrying the result's metadata) is
// written, the completion is enqueued, the run leaves the active set, and
// only then are waiters released, so every waiter reads the same final
// task and a Cancel that no longer finds the run finds a terminal row.
func (w *Worker) finalize(r *run, o outcome) {
	r.mu.Lock()
	if r.finalizing {
		r.mu.Unlock()
		return
	}
	r.finalizing = true
	cancelled, reason := r.cancelRequested, r.cancelReason
	r.mu.Unlock()
	r.cancel()

	ctx, cancel := w.writeCtx()
	defer cancel()
	event, change := terminalEvent(o, cancelled, reason)
	if event == demiurge.EvTaskFailed {
		r.handle.Log("stderr", "error: "+change.Error.Message)
	}
	r.handle.close(ctx)
	tk, err := w.writeEvent(ctx, r, event, change, true)
	switch {
	case err != nil:
		w.log.Error("task worker: terminal event not written", "task_id", r.id, "event", event,
			"code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
	case w.held(r.id):
		// A consuming waiter takes the result and the completion with it.
	default:
		if cerr := w.cp.emitCompletion(ctx, tk); cerr != nil {
			// The completion loop's scan emits it later.
			w.log.Warn("task worker: completion not enqueued", "task_id", r.id,
				"code", demiurge.ErrorCode(cerr), "error", demiurge.ErrorMessage(cerr))
		}
	}
	r.final, r.finalErr = tk, err
	w.mu.Lock()
	delete(w.runs, r.id)
	w.mu.Unlock()
	close(r.done)
	signal(w.wake)
	signal(w.freed)
}

// terminalEvent maps an outcome to the task's terminal event. A requested
// cancel wins over the runner's result, whose metadata it keeps.
func terminalEvent(o outcome, cancelled bool, reason string) (string, demiurge.TaskChange) {
	var c demiurge.TaskChange
	if len(o.res.Metadata) > 0 {
		c.Metadata = maps.Clone(o.res.Metadata)
	}
	switch {
	case cancelled:
		reason = cmp.Or(reason, DefaultCancelSummary)
		if o.timedOut {
			c.Metadata = map[string]any{"exit_reason": "runner did not stop within the cancel grace"}
		}
		c.Summary, c.Error = reason, &demiurge.ErrorInfo{Message: reason}
		return demiurge.EvTaskCancelled, c
	case o.err != nil || o.res.Failed:
		msg := o.res.Error
		if o.err != nil {
			msg = demiurge.ErrorMessage(o.err)
		}
		msg = cmp.Or(msg, "task failed")
		summary := o.res.Summary
		if summary == "" || o.err != nil {
			summary = msg
		}
		c.Summary, c.Error = summary, &demiurge.ErrorInfo{Message: msg}
		return demiurge.EvTaskFailed, c
	}
	c.Summary, c.ResultRef = o.res.Summary, o.res.ResultRef
	if o.res.Blocked {
		return demiurge.EvTaskBlocked, c
	}
	return demiurge.EvTaskSucceeded, c
}

// writeEvent appends a task event of a run. The fast path is one append
// guarded by the seq this worker last saw; if anything else moved the
// aggregate (a cancel request, another process ending the task) it falls
// back to the control plane's read-check-append loop, which with sticky
// returns a task that is already terminal unchanged. Either way at most
// one terminal event is ever written.
func (w *Worker) writeEvent(ctx context.Context, r *run, event string, change demiurge.TaskChange, sticky bool) (demiurge.Task, error) {
	status, seq := r.state()
	if to, ok := Transition(status, event); ok && seq > 0 {
		c := change
		c.Status = to
		ev, err := taskEvent(r.id, event, c)
		if err != nil {
			return demiurge.Task{}, err
		}
		ev.CreatedAt = w.cp.now()
		evs, tk, err := w.appendTask(ctx, demiurge.EventBatch{Events: []demiurge.Event{ev},
			Expected: &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: r.id, LastSeq: seq}})
		if err == nil {
			r.moved(to, evs[0].Seq)
			return tk, nil
		}
		if demiurge.ErrorCode(err) != demiurge.ECONFLICT {
			return demiurge.Task{}, err
		}
	}
	tk, err := w.cp.transition(ctx, r.id, event, change, sticky)
	if err == nil {
		r.moved(tk.Status, 0)
	}
	return tk, err
}

// launch submits the task of run r (registered under its id) and starts
// its runner. created is false for an idempotent replay, whose earlier task
// is returned and not run again.
func (w *Worker) launch(ctx context.Context, r *run, runner Runner, spec demiurge.TaskSpec, src demiurge.TaskOrigin) (demiurge.Task, error) {
	tk, seq, created, err := w.submitTask(ctx, r.id, spec, src, true)
	if err != nil || !created {
		w.abandon(r)
		return tk, err
	}
	w.launchStarted(r, runner, demiurge.StartedTask{Task: tk, Seq: seq, Action: maps.Clone(spec.Payload)})
	return tk, nil
}

// newRun returns the live state of task id; its runner context lives as
// long as the worker's background context.
func (w *Worker) newRun(id string) *run {
	ctx, cancel := context.WithCancel(w.bg)
	return &run{id: id, ctx: ctx, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{})}
}

// errClosed refuses submissions after Close began.
var errClosed = demiurge.Errorf(demiurge.EUNAVAILABLE, "task admission is closed")

// Submit submits a task (see SubmitTask: kinds, write scope, idempotency)
// and runs it on a goroutine the worker owns. The task is written queued
// and started in one append, stamped with the worker's HostID, and
// returned running. A repeated idempotency key returns the earlier task
// without running it again. It fails with EUNAVAILABLE "task admission is
// closed" once Close began, EINVALID "no task runner for kind: <kind>"
// when no runner is registered, EINVALID before Start.
func (w *Worker) Submit(ctx context.Context, spec demiurge.TaskSpec, src demiurge.TaskOrigin) (demiurge.Task, error) {
	id, spec := withTaskID(spec)
	w.mu.Lock()
	if err := w.admissionLocked(); err != nil {
		w.mu.Unlock()
		return demiurge.Task{}, err
	}
	w.took = true
	runner := w.runners[spec.Kind]
	if runner == nil {
		w.mu.Unlock()
		return demiurge.Task{}, demiurge.Errorf(demiurge.EINVALID, "no task runner for kind: %s", spec.Kind)
	}
	if _, busy := w.runs[id]; busy {
		// Already running here: a replay or a clash, answered from the store.
		w.mu.Unlock()
		return w.cp.SubmitTask(ctx, spec, src)
	}
	if w.opts.MaxActive > 0 && len(w.runs) >= w.opts.MaxActive {
		// Full: the task waits in the queue for room here, or, when it is
		// not bound to this machine, on any Host of the ledger.
		w.mu.Unlock()
		if !portable(spec.Kind) {
			src.HostID = cmp.Or(src.HostID, w.opts.HostID)
		}
		tk, _, _, err := w.submitTask(ctx, id, spec, src, false)
		return tk, err
	}
	r := w.newRun(id)
	w.runs[id] = r
	w.mu.Unlock()
	src.HostID = cmp.Or(src.HostID, w.opts.HostID)
	return w.launch(ctx, r, runner, spec, src)
}

// portable reports whether a task of kind may run on any Host of the
// ledger: a scheduled run needs only the ledger and the (shared) core,
// while a terminal command and a child agent work in a workspace of the
// machine they were asked on, and an evolver run leaves its run tree in
// the home its review and promotion are asked of.
func portable(kind string) bool {
	return kind == demiurge.TaskKindScheduleFire
}
