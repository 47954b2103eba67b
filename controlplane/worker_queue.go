package controlplane

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// Queue defaults.
const (
	// DefaultQueuePoll is how often the worker looks at the queue when no
	// wake-up told it to.
	DefaultQueuePoll = time.Second
	// DefaultQueueRuns bounds the queued tasks a worker without MaxActive
	// runs at once.
	DefaultQueueRuns = 512
	// queueClaimBatch bounds one claim.
	queueClaimBatch = 512
	// queueClaimLease is the lease of a claim: a claimed task is started
	// in the next write, so the lease matters only when the Host dies in
	// between, and then bounds how long its claims stay out of service.
	queueClaimLease = 5 * time.Second
)

// Enqueue submits a task to the ledger's queue (see SubmitTask: kinds,
// write scope, idempotency) without running it: it stays queued until a
// Host whose worker runs its kind claims and starts it — this worker or
// another Host's on the same ledger. src.HostID queues it for that Host
// alone (a task bound to its machine); empty, for any Host. The
// submission is group-committed with the worker's other task events.
func (w *Worker) Enqueue(ctx context.Context, spec demiurge.TaskSpec, src demiurge.TaskOrigin) (demiurge.Task, error) {
	w.mu.Lock()
	err := w.admissionLocked()
	w.took = w.took || err == nil
	w.mu.Unlock()
	if err != nil {
		return demiurge.Task{}, err
	}
	id, spec := withTaskID(spec)
	tk, _, _, err := w.submitTask(ctx, id, spec, src, false)
	return tk, err
}

// EnqueueMany is Enqueue for many tasks of one origin at once: their
// submissions go to the store in one write (a failing one, say a task id
// that exists, fails alone with the error Enqueue would give and leaves the
// others). A write scope is refused (EINVALID): scoped submissions are
// checked one by one, with Enqueue. It returns a task or an error per
// spec, in order.
func (w *Worker) EnqueueMany(ctx context.Context, specs []demiurge.TaskSpec, src demiurge.TaskOrigin) ([]demiurge.Task, []error, error) {
	if strings.TrimSpace(src.WriteScope) != "" {
		return nil, nil, demiurge.Errorf(demiurge.EINVALID, "tasks with a write scope are enqueued one at a time")
	}
	w.mu.Lock()
	err := w.admissionLocked()
	w.took = w.took || err == nil
	w.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	batches := make([]demiurge.EventBatch, len(specs))
	errs := make([]error, len(specs))
	for i, spec := range specs {
		if errs[i] = checkKind(spec.Kind); errs[i] != nil {
			continue
		}
		id, spec := withTaskID(spec)
		sub := w.cp.submittedEvent(id, spec, src, "")
		sub.EventID = demiurge.NewID("evt") // known, so a replay is told apart
		batches[i] = demiurge.EventBatch{Events: []demiurge.Event{sub},
			IdempotencyKey: submitKey(spec, id), Expected: &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: id}}
	}
	var todo []demiurge.EventBatch
	var at []int
	for i, b := range batches {
		if errs[i] == nil {
			todo, at = append(todo, b), append(at, i)
		}
	}
	tasks := make([]demiurge.Task, len(specs))
	if len(todo) == 0 {
		return tasks, errs, nil
	}
	err = w.st.AppendTaskBatches(ctx, todo, func(j int, stored []demiurge.Event, tk demiurge.Task, err error) {
		i := at[j]
		switch {
		case err == nil && stored[0].EventID != batches[i].Events[0].EventID:
			tasks[i] = tk // an idempotent replay: the earlier task
		case demiurge.ErrorCode(err) == demiurge.ECONFLICT:
			// The id exists: a replay of the same key answers with its
			// task, anything else is refused as Enqueue would.
			tasks[i], errs[i] = w.Enqueue(ctx, specs[i], src)
		default:
			tasks[i], errs[i] = tk, err
		}
	})
	return tasks, errs, err
}

// admissionLocked refuses a submission after Close began or before
// Start. w.mu is held.
func (w *Worker) admissionLocked() error {
	switch {
	case w.closed:
		return errClosed
	case !w.started:
		return demiurge.Errorf(demiurge.EINVALID, "task worker is not started")
	}
	return nil
}

// withTaskID returns the task id spec's payload names, or a new one set in
// a copy of the payload.
func withTaskID(spec demiurge.TaskSpec) (string, demiurge.TaskSpec) {
	if id := str(spec.Payload, "task_id"); id != "" {
		return id, spec
	}
	id := demiurge.NewID("task")
	spec.Payload = maps.Clone(spec.Payload)
	if spec.Payload == nil {
		spec.Payload = map[string]any{}
	}
	spec.Payload["task_id"] = id
	return id, spec
}

// queueRoom is how many more queued tasks this worker may start now.
func (w *Worker) queueRoom() int {
	limit := w.opts.MaxActive
	if limit <= 0 {
		limit = DefaultQueueRuns
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0
	}
	return max(0, limit-len(w.runs))
}

// kinds are the task kinds this worker runs, sorted.
func (w *Worker) kinds() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.runners))
}

// queueLoop claims and starts queued tasks while the worker has room: at
// once when a wake-up announces a task queued for any Host or for this
// one, when a run of this worker ends, and every QueuePoll otherwise.
func (w *Worker) queueLoop() {
	defer w.loops.Done()
	var anyHost <-chan struct{} // nil (never ready) for a worker of its own queue only
	if !w.opts.OwnQueueOnly {
		var stopAny func()
		anyHost, stopAny = w.subscribe(demiurge.TopicTasks)
		defer stopAny()
	}
	thisHost, stopThis := w.subscribe(demiurge.TopicHostTasks(w.opts.HostID))
	defer stopThis()
	tick := time.NewTicker(w.opts.QueuePoll)
	defer tick.Stop()
	for {
		w.drainQueue()
		select {
		case <-w.ctx.Done():
			return
		case <-anyHost:
		case <-thisHost:
		case <-w.freed:
		case <-tick.C:
		}
	}
}

// drainQueue claims and starts batches until the queue is empty, the
// worker is full, or the store fails (the next wake-up or tick tries
// again).
func (w *Worker) drainQueue() {
	kinds := w.kinds()
	if len(kinds) == 0 {
		return
	}
	for w.ctx.Err() == nil {
		room := min(w.queueRoom(), queueClaimBatch)
		if room == 0 {
			return
		}
		ids, err := w.st.ClaimQueuedTasks(w.ctx, w.opts.HostID, !w.opts.OwnQueueOnly, kinds, room, queueClaimLease)
		if err != nil {
			w.queueFailed("claim", err)
			return
		}
		if len(ids) == 0 {
			return
		}
		w.startClaimed(ids)
		if len(ids) < room {
			return
		}
	}
}

// startClaimed starts the claimed tasks of ids in one write and launches
// their runners. Each is registered as a run first, so a Cancel that
// finds it running in the store finds it here too.
func (w *Worker) startClaimed(ids []string) {
	runs := make(map[string]*run, len(ids))
	var mine []string
	w.mu.Lock()
	for _, id := range ids {
		if _, busy := w.runs[id]; busy || w.closed {
			continue
		}
		r := w.newRun(id)
		w.runs[id], runs[id] = r, r
		mine = append(mine, id)
		w.took = true
	}
	w.mu.Unlock()
	ctx, cancel := w.writeCtx()
	defer cancel()
	var started []demiurge.StartedTask
	if len(mine) > 0 {
		var err error
		if started, err = w.st.StartClaimedTasks(ctx, w.opts.HostID, mine); err != nil {
			w.queueFailed("start", err)
		}
	}
	if len(started) < len(ids) {
		// What this worker will not start goes back to the queue now,
		// not when the claim lapses.
		ran := make(map[string]bool, len(started))
		for _, st := range started {
			ran[st.Task.ID] = true
		}
		left := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return ran[id] })
		if err := w.st.ReleaseTaskClaims(ctx, w.opts.HostID, left); err != nil {
			w.queueFailed("release", err)
		}
	}
	for _, st := range started {
		r := runs[st.Task.ID]
		delete(runs, st.Task.ID)
		w.mu.Lock()
		runner := w.runners[st.Task.Kind]
		w.mu.Unlock()
		w.launchStarted(r, runner, st)
	}
	// Not started (cancelled meanwhile, or the claim lapsed and another
	// Host took it): not ours to run.
	for _, r := range runs {
		w.abandon(r)
	}
}

// launchStarted starts the runner of a task the store has just started
// for this worker.
func (w *Worker) launchStarted(r *run, runner Runner, st demiurge.StartedTask) {
	h := &Handle{w: w, run: r, task: st.Task, payload: st.Action}
	r.mu.Lock()
	r.launched, r.handle, r.status, r.seq = true, h, st.Task.Status, st.Seq
	r.mu.Unlock()
	w.tasks.Add(1)
	close(r.ready)
	go w.execute(r, runner, st.Task)
}

// abandon drops a registered run that was never launched.
func (w *Worker) abandon(r *run) {
	w.mu.Lock()
	if w.runs[r.id] == r {
		delete(w.runs, r.id)
	}
	w.mu.Unlock()
	r.cancel()
	close(r.ready)
}

func (w *Worker) queueFailed(step string, err error) {
	if w.ctx.Err() == nil {
		w.log.Warn("task worker: queue "+step+" failed", "code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
	}
}

// subscribe is WorkerOptions.Subscribe, or a channel that never fires.
func (w *Worker) subscribe(topic string) (<-chan struct{}, func()) {
	if w.opts.Subscribe == nil {
		return nil, func() {}
	}
	return w.opts.Subscribe(topic)
}
