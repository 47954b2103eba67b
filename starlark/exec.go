package starlark

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	sl "go.starlark.net/starlark"
)

// stop reasons, recorded before a thread is cancelled so the error can say why.
const (
	stopNone int32 = iota
	stopBudget
	stopTimeout      // the Limits deadline of this execution
	stopCallerExpiry // the caller's own context deadline
	stopCancelled    // the caller's context was cancelled
)

// errExecTimeout is the cause of the execution's own deadline.
var errExecTimeout = errors.New("starlark execution deadline")

// exec runs fn on a fresh thread under the step budget, allocation budget and
// deadline of lim, cancelling the thread when ctx ends. The watcher goroutine
// that cancels the thread is waited for before exec returns.
func (r *Runtime) exec(ctx context.Context, lim Limits, path string, fn func(*sl.Thread) (sl.Value, error)) (sl.Value, error) {
	steps := lim.MaxSteps
	if steps == 0 {
		steps = r.opts.MaxSteps
	}
	timeout := lim.Timeout
	if timeout <= 0 {
		timeout = r.opts.Timeout
	}
	memory := lim.MemoryLimit
	if memory <= 0 {
		memory = r.opts.MemoryLimit
	}

	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errExecTimeout)
	defer cancel()

	var reason atomic.Int32
	thread := &sl.Thread{
		Name:  path,
		Print: r.printer(path),
		Load:  refuseLoad,
	}
	thread.SetLocal(threadContextKey, ctx)
	thread.SetLocal(budgetKey, &budget{limit: memory})
	thread.SetMaxExecutionSteps(steps)
	thread.OnMaxSteps = func(th *sl.Thread) {
		reason.CompareAndSwap(stopNone, stopBudget)
		th.Cancel("step budget exhausted")
	}

	doneReason := func() int32 {
		switch {
		case context.Cause(ctx) == errExecTimeout:
			return stopTimeout
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return stopCallerExpiry
		}
		return stopCancelled
	}
	fired := make(chan struct{})
	stopWatch := context.AfterFunc(ctx, func() {
		defer close(fired)
		reason.CompareAndSwap(stopNone, doneReason())
		thread.Cancel("context done")
	})

	v, err := fn(thread)
	if !stopWatch() {
		<-fired // the watcher ran: wait so it never outlives this call
	}
	if exceeded(thread) {
		// Whatever error the charge became on its way out (a cancelled
		// thread), the budget is the reason.
		if err == nil {
			err = &errMemory{limit: memory}
		}
		return nil, coded(execError(path, KindMemory, memoryMessage(memory), err))
	}
	if err == nil {
		return v, nil
	}
	if ctx.Err() != nil {
		// A built-in that watches the context may return its error before
		// the watcher runs: the context's end is still the reason.
		reason.CompareAndSwap(stopNone, doneReason())
	}

	var e *Error
	switch reason.Load() {
	case stopBudget:
		e = execError(path, KindBudget, fmt.Sprintf("step budget of %d steps exhausted", steps), err)
	case stopTimeout:
		e = execError(path, KindDeadline, fmt.Sprintf("deadline of %s exceeded", timeout), err)
	case stopCallerExpiry:
		e = execError(path, KindDeadline, "deadline exceeded", err)
	case stopCancelled:
		e = execError(path, KindCancelled, "cancelled", err)
	default:
		e = execError(path, KindRuntime, "", err)
	}
	return nil, coded(e)
}

func (r *Runtime) printer(path string) func(*sl.Thread, string) {
	if r.opts.Print == nil {
		return func(*sl.Thread, string) {}
	}
	return func(_ *sl.Thread, msg string) { r.opts.Print(path, msg) }
}

// refuseLoad backs up the compile-time refusal of load() statements.
func refuseLoad(*sl.Thread, string) (sl.StringDict, error) {
	return nil, errors.New("load is not allowed: authored modules have no file access")
}
