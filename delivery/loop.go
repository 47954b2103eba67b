package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// runBatch is how many due deliveries Run claims and sends at once.
const runBatch = 16

// Run is the retry loop: until ctx ends it claims due delivery.send work
// items (store ClaimDueWork: queued items past their Handoff window,
// retries whose backoff has passed, and claims whose lease expired) and
// dispatches each like Dispatch does, through the session's most recently
// bound route: no live route → unrouted. A batch is sent concurrently and
// awaited before the next claim; when a batch comes back full the next one
// is claimed at once, otherwise after PollInterval.
//
// Store failures are logged (Options.Logger) and retried at the next poll;
// they never stop the loop. Cancelling ctx stops it: sends in progress see
// the cancellation (their deliveries end failed "delivery cancelled", as in
// Dispatch), and Run returns nil once they are recorded. Route calls that
// ignore cancellation are left to Wait. The caller owns the goroutine Run
// runs on; run at most a few per database (claims keep them apart).
func (rt *Runtime) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		n := rt.runOnce(ctx)
		next := rt.opts.PollInterval
		if n == runBatch {
			next = 0
		}
		timer.Reset(next)
	}
}

// runOnce claims one batch of due deliveries, sends them and waits for
// their records. It returns how many it claimed.
func (rt *Runtime) runOnce(ctx context.Context) int {
	items, err := rt.st.ClaimDueWork(ctx, WorkKind, OwnerID, rt.opts.Lease, runBatch)
	if err != nil {
		if ctx.Err() == nil {
			rt.opts.Logger.Warn("delivery retry loop: claim due work", "err", err)
		}
		return 0
	}
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt.dispatchClaimed(ctx, it)
		}()
	}
	wg.Wait()
	return len(items)
}

// dispatchClaimed sends one delivery whose work item Run claimed. A claim
// that is not started (the outbox row moved on; the store then ends the
// work item to match) or not recorded is left to its lease.
func (rt *Runtime) dispatchClaimed(ctx context.Context, item demiurge.WorkItem) {
	if ctx.Err() != nil {
		return // the claim lapses with its lease; nothing was sent
	}
	d, w, started, err := rt.st.StartDeliverySend(ctx, item.ID, item.ClaimID, OwnerID, rt.opts.HostID, rt.opts.Lease)
	if err != nil {
		if ctx.Err() == nil {
			rt.opts.Logger.Warn("delivery retry loop: start", "delivery_id", item.ID, "err", err)
		}
		return
	}
	if !started {
		return
	}
	if _, err := rt.send(ctx, d, w); err != nil && ctx.Err() == nil {
		rt.opts.Logger.Warn("delivery retry loop: send", "delivery_id", item.ID, "err", err)
	}
}
