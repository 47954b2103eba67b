package delivery

import (
	"context"
	"fmt"
	"sync"

	"github.com/demiurge/demiurge"
)

// inflight counts route calls that are running. A route that ignores
// cancellation can outlive the dispatch that started it; Wait lets the
// owner of the Runtime wait for such calls at shutdown.
type inflight struct {
	mu   sync.Mutex    // guards n, idle
	n    int           // calls running
	idle chan struct{} // closed while n == 0; nil means closed
}

func (c *inflight) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.idle = make(chan struct{})
	}
	c.n++
}

func (c *inflight) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 {
		close(c.idle)
	}
}

// wait returns a channel closed when no call is running.
func (c *inflight) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	return c.idle
}

// Wait blocks until every route call this Runtime started has returned,
// or ctx ends (ETIMEOUT or ECANCELED). Dispatch returns after
// Options.SendTimeout even when a route does not; a route that also ignores
// its cancelled context keeps its goroutine until it returns, and the owner
// of the Runtime waits for it here (after stopping Run) before closing what
// routes use.
func (rt *Runtime) Wait(ctx context.Context) error {
	select {
	case <-rt.calls.wait():
		return nil
	case <-ctx.Done():
		code := demiurge.ECANCELED
		if ctx.Err() == context.DeadlineExceeded {
			code = demiurge.ETIMEOUT
		}
		return demiurge.WrapError(code, ctx.Err(), "delivery runtime: route calls still running")
	}
}

// callEnd says how a route call ended, as far as the dispatcher knows.
type callEnd int

const (
	callReturned  callEnd = iota // the route answered (res, err)
	callCancelled                // the caller's context ended first
	callTimedOut                 // SendTimeout passed first
)

type callResult struct {
	res DeliverResult
	err error
	end callEnd
}

// deliver hands out to the router on a goroutine of its own and waits at
// most SendTimeout for the answer. An answer that arrives with an error
// after the caller's context or the send deadline ended counts as
// cancelled or timed out: the route was interrupted, not refused.
func (rt *Runtime) deliver(ctx context.Context, out demiurge.Outbound) callResult {
	sctx, cancel := context.WithTimeout(ctx, rt.opts.SendTimeout)
	defer cancel()
	answer := make(chan callResult, 1) // buffered: an abandoned call never blocks
	rt.calls.add()
	go func() {
		defer rt.calls.done()
		var r callResult
		defer func() {
			if p := recover(); p != nil {
				r = callResult{err: demiurge.Errorf(demiurge.EINTERNAL, "route panicked: %s", panicText(p))}
			}
			answer <- r
		}()
		r.res, r.err = rt.router.Deliver(sctx, out)
	}()
	var r callResult
	select {
	case r = <-answer:
	case <-sctx.Done():
		select {
		case r = <-answer: // answered at the deadline: the answer wins
		default:
			r.err = sctx.Err() // abandoned: the route still has it
		}
	}
	if r.err == nil {
		return r
	}
	switch {
	case ctx.Err() != nil:
		r.end = callCancelled
	case sctx.Err() != nil:
		r.end = callTimedOut
	}
	return r
}

// panicText keeps a route's panic value out of rows unless it is a coded
// error: like an uncoded error, it may carry a credential.
func panicText(p any) string {
	if err, ok := p.(error); ok {
		return demiurge.ErrorMessage(err)
	}
	return fmt.Sprintf("%T", p)
}
