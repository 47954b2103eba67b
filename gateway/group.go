package gateway

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
)

// acceptGroup commits the cursor-less accepts of every channel as group
// commits: an accept that finds no commit waiting for the store's writer
// starts one, and every accept handed in until that commit's transaction
// begins joins it. So at most one accept transaction of this gateway
// waits for the writer at a time, a burst of requests costs one
// transaction instead of one each, and a lone accept is committed at once
// (nothing waits for a timer). Each caller still returns only after its
// own envelopes are committed.
type acceptGroup struct {
	st Store

	mu      sync.Mutex
	pending []*acceptCall // handed in, not yet taken by a transaction
	waiting bool          // a commit is waiting for its transaction to begin
}

// acceptCall is one caller's envelopes and, once done closes, its answer.
type acceptCall struct {
	envs     []demiurge.InboundEnvelope
	receipts []demiurge.InboxReceipt
	err      error
	done     chan struct{}
}

// accept commits envs, alone or with the envelopes of concurrent callers,
// and returns their receipts once committed.
func (a *acceptGroup) accept(ctx context.Context, envs []demiurge.InboundEnvelope) ([]demiurge.InboxReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "inbox accept cancelled")
	}
	c := &acceptCall{envs: envs, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, c)
	lead := !a.waiting
	a.waiting = true
	a.mu.Unlock()
	if lead {
		// The commit outlives this caller's cancellation: it carries the
		// other callers' envelopes too, and a store write once begun runs
		// to its end anyway.
		a.commit(context.WithoutCancel(ctx))
	}
	<-c.done
	return c.receipts, c.err
}

// commit runs one group transaction over the calls pending when it
// begins, and answers each of them.
func (a *acceptGroup) commit(ctx context.Context) {
	var calls []*acceptCall
	taken := false
	take := func() [][]demiurge.InboundEnvelope {
		a.mu.Lock()
		calls, a.pending, a.waiting = a.pending, nil, false
		a.mu.Unlock()
		taken = true
		groups := make([][]demiurge.InboundEnvelope, len(calls))
		for i, c := range calls {
			groups[i] = c.envs
		}
		return groups
	}
	receipts, errs, err := a.st.AcceptInboundGroups(ctx, take)
	if !taken {
		take() // the transaction never began: its calls fail with its error
	}
	for i, c := range calls {
		switch {
		case err != nil:
			c.err = err
		case i >= len(errs) || i >= len(receipts):
			c.err = demiurge.Errorf(demiurge.EINTERNAL, "inbox group commit answered %d of %d accepts", min(len(errs), len(receipts)), len(calls))
		default:
			c.receipts, c.err = receipts[i], errs[i]
		}
		close(c.done)
	}
}
