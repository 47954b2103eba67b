package controlplane

import (
	"cmp"
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// completionLoop delivers completions to the OnCompletion function: at once
// when a task of this worker ends (w.wake) or a wake-up announces one
// written by another process, else every completionPoll. Each poll also
// emits the completions terminal tasks are missing. A drain request (from
// Close) is answered once nothing due is left to deliver.
func (w *Worker) completionLoop() {
	defer w.loops.Done()
	due, stop := w.subscribe(demiurge.TopicWork(demiurge.WorkKindTaskCompletion))
	defer stop()
	t := time.NewTicker(completionPoll)
	defer t.Stop()
	for {
		w.dispatchCompletions()
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		case <-due:
		case done := <-w.drain:
			w.drainCompletions(done)
		case <-t.C:
			if err := w.emitMissingCompletions(w.ctx); err != nil && w.ctx.Err() == nil {
				w.log.Warn("task worker: missing completions not emitted", "code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
			}
		}
	}
}

// drainCompletions delivers until no completion is due and no handler is
// running, then closes done. Completions scheduled for a later retry are
// left for their time.
func (w *Worker) drainCompletions(done chan struct{}) {
	for {
		if w.dispatchCompletions() == 0 && len(w.slots) == 0 {
			close(done)
			return
		}
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		}
	}
}

// dispatchCompletions claims as many due completions as there are free
// handler slots and delivers each on its own goroutine. It returns how many
// it claimed.
func (w *Worker) dispatchCompletions() int {
	w.mu.Lock()
	fn := w.onComplete
	w.mu.Unlock()
	free := cap(w.slots) - len(w.slots)
	if fn == nil || free == 0 || w.ctx.Err() != nil {
		return 0
	}
	items, err := w.st.ClaimDueWork(w.ctx, demiurge.WorkKindTaskCompletion, w.opts.HostID, completionLease, free)
	if err != nil {
		if w.ctx.Err() == nil {
			w.log.Warn("task worker: completions not claimed", "code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
		}
		return 0
	}
	for _, it := range items {
		w.slots <- struct{}{} // never blocks: only this loop takes slots
		w.loops.Add(1)
		go w.deliver(fn, it)
	}
	return len(items)
}

// deliver hands one claimed completion to fn, keeping its claim alive
// meanwhile, then acknowledges it (fn succeeded) or schedules a retry.
func (w *Worker) deliver(fn func(context.Context, Completion) error, it demiurge.WorkItem) {
	defer w.loops.Done()
	defer func() {
		<-w.slots
		signal(w.wake)
	}()
	taskID := cmp.Or(str(it.Payload, "task_id"), it.ParentWorkID)
	tk, err := w.cp.st.Task(w.ctx, taskID)
	if err != nil {
		w.settle(it, err, demiurge.ErrorCode(err) == demiurge.ENOTFOUND)
		return
	}
	if w.held(taskID) {
		// A waiter is about to consume it: step aside for a moment.
		ctx, cancel := w.writeCtx()
		defer cancel()
		if _, err := w.st.TransitionWork(ctx, it.ID, it.ClaimID, demiurge.WorkFailed,
			demiurge.WorkFields{LastError: "held by a waiter", RetryAt: w.opts.Now().Add(heldRetry)}); err != nil {
			w.log.Warn("task worker: held completion not released", "work_id", it.ID, "code", demiurge.ErrorCode(err))
		}
		return
	}
	session := cmp.Or(it.OwnerSessionID, tk.OwnerSessionID)
	c := Completion{WorkID: it.ID, TaskID: taskID, SessionID: session, Task: tk,
		Summary: str(it.Payload, "summary"), ClaimID: it.ClaimID, Payload: it.Payload}
	stop := w.keepClaim(it)
	err = callCompletion(fn, w.ctx, c)
	stop()
	w.settle(it, err, false)
}

// callCompletion calls fn, turning a panic into an error.
func callCompletion(fn func(context.Context, Completion) error, ctx context.Context, c Completion) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = demiurge.Errorf(demiurge.EINTERNAL, "completion handler panicked")
		}
	}()
	return fn(ctx, c)
}

// keepClaim extends the claim's lease every third of it until stop is
// called, so a long handler (a whole synthetic turn) keeps its claim while
// a crashed process's claim lapses within completionLease.
func (w *Worker) keepClaim(it demiurge.WorkItem) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(completionLease / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				ctx, cancel := w.writeCtx()
				_, err := w.st.TransitionWork(ctx, it.ID, it.ClaimID, demiurge.WorkHeartbeat, demiurge.WorkFields{Lease: completionLease})
				cancel()
				if err != nil {
					w.log.Warn("task worker: completion claim not extended", "work_id", it.ID, "code", demiurge.ErrorCode(err))
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}

// settle ends a delivery: acknowledged on success; on failure a retry after
// a backoff (at once when the worker is closing), or failed for good after
// maxCompletionTry attempts or when permanent.
func (w *Worker) settle(it demiurge.WorkItem, err error, permanent bool) {
	ctx, cancel := w.writeCtx()
	defer cancel()
	if err == nil {
		if _, err := w.st.AcknowledgeTaskCompletion(ctx, it.ID, it.ClaimID); err != nil {
			w.log.Warn("task worker: completion not acknowledged", "work_id", it.ID, "code", demiurge.ErrorCode(err), "error", demiurge.ErrorMessage(err))
		}
		return
	}
	f := demiurge.WorkFields{LastError: demiurge.ErrorMessage(err)}
	switch {
	case permanent || it.Attempts >= maxCompletionTry:
	case w.ctx.Err() != nil:
		f.RetryAt = w.opts.Now()
	default:
		f.RetryAt = w.opts.Now().Add(completionBackoff(it.Attempts))
	}
	if _, terr := w.st.TransitionWork(ctx, it.ID, it.ClaimID, demiurge.WorkFailed, f); terr != nil {
		w.log.Warn("task worker: completion retry not scheduled", "work_id", it.ID, "code", demiurge.ErrorCode(terr), "error", demiurge.ErrorMessage(terr))
	}
}

// completionBackoff is 1s·2^(attempt-1), at most a minute.
func completionBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 7 {
		return time.Minute
	}
	return min(time.Second<<(attempt-1), time.Minute)
}
