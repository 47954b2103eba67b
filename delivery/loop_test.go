package delivery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// runLoop runs rt.Run until the test ends (or stop is called) and checks
// that it returns nil.
func runLoop(tb testing.TB, rt *delivery.Runtime) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("Run returned %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				tb.Errorf("Run did not return after cancel")
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}

// waitStatus polls the outbox until id has status or the deadline passes.
func waitStatus(tb testing.TB, f *fixture, id, status string) demiurge.Delivery {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := f.outbox(tb, id)
		if d.Status == status {
			return d
		}
		if time.Now().After(deadline) {
			tb.Fatalf("delivery %s is %q (%s), want %q", id, d.Status, d.LastError, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func loopOptions() delivery.Options {
	return delivery.Options{HostID: "host_test", RetryBase: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond,
		PollInterval: 5 * time.Millisecond, Handoff: time.Hour}
}

// A transient failure in Dispatch is picked up by the retry loop and sent.
func TestRunRetriesUntilSent(t *testing.T) {
	ctx := context.Background()
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), loopOptions())
	offline := demiurge.Errorf(demiurge.EUNAVAILABLE, "chat adapter offline")
	route := &scriptedRoute{errs: []error{offline, offline}}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("hello", demiurge.HistoryPersist))
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryQueued {
		t.Fatalf("Dispatch=%q, %v; want queued for a retry", s, err)
	}
	stop := runLoop(t, f.rt)
	d := waitStatus(t, f, id, demiurge.DeliverySent)
	stop()
	if d.Attempts != 3 || route.count() != 3 {
		t.Fatalf("attempts=%d calls=%d, want 3 and 3", d.Attempts, route.count())
	}
	if w := f.work(t, id); w.Status != demiurge.WorkSucceeded {
		t.Fatalf("work=%+v", w)
	}
}

// A delivery nobody dispatched is taken up after its handoff window: sent
// through the session's route when one is live, unrouted otherwise.
func TestRunTakesUpUndispatchedDeliveries(t *testing.T) {
	opts := loopOptions()
	opts.Handoff = time.Millisecond
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), opts)
	unrouted := f.enqueue(t, f.intent("nobody listens", demiurge.HistoryTransient))
	stop := runLoop(t, f.rt)
	d := waitStatus(t, f, unrouted, demiurge.DeliveryUnrouted)
	if d.LastError != delivery.NoInteractiveRoute || d.Attempts != 1 {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, unrouted); w.Status != demiurge.WorkSucceeded {
		t.Fatalf("work=%+v", w)
	}

	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	routed := f.enqueue(t, f.intent("someone listens", demiurge.HistoryTransient))
	waitStatus(t, f, routed, demiurge.DeliverySent)
	stop()
	if outs := route.outbounds(); len(outs) != 1 || outs[0].DeliveryID != routed {
		t.Fatalf("route got %+v, want the one routed delivery", outs)
	}
}

// Within its handoff window a fresh delivery belongs to the caller that
// enqueued it: the loop leaves it alone.
func TestRunLeavesFreshDeliveriesToTheEnqueuer(t *testing.T) {
	ctx := context.Background()
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), loopOptions()) // Handoff: 1h
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("mine", demiurge.HistoryTransient))
	stop := runLoop(t, f.rt)
	time.Sleep(100 * time.Millisecond) // twenty polls
	stop()
	if d := f.outbox(t, id); d.Status != demiurge.DeliveryQueued || len(route.outbounds()) != 0 {
		t.Fatalf("outbox=%q with %d sends while in its handoff window, want queued and none", d.Status, len(route.outbounds()))
	}
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliverySent {
		t.Fatalf("Dispatch=%q, %v", s, err)
	}
}

// Stopping Run cancels a send in progress and records it.
func TestRunStopRecordsInterruptedSend(t *testing.T) {
	opts := loopOptions()
	opts.Handoff = time.Millisecond
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), opts)
	route := &recordingRoute{block: true, entered: make(chan struct{})}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("slow", demiurge.HistoryTransient))
	stop := runLoop(t, f.rt)
	select {
	case <-route.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop never called the route")
	}
	stop()
	if d := f.outbox(t, id); d.Status != demiurge.DeliveryFailed || d.LastError != delivery.Cancelled {
		t.Fatalf("outbox after stop=%+v, want failed %q", d, delivery.Cancelled)
	}
}

// Dispatchers and retry loops racing for one delivery send it once.
func TestDispatchAndRunRaceSendsOnce(t *testing.T) {
	ctx := context.Background()
	opts := loopOptions()
	opts.Handoff = time.Nanosecond
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), opts)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	const rounds = 5
	for range rounds {
		id := f.enqueue(t, f.intent("once", demiurge.HistoryTransient))
		var wg sync.WaitGroup
		for range 2 {
			stop := runLoop(t, delivery.NewRuntime(f.db, f.router, opts))
			defer stop()
		}
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := delivery.NewRuntime(f.db, f.router, opts).Dispatch(ctx, id); err != nil {
					t.Errorf("Dispatch: %v", err)
				}
			}()
		}
		wg.Wait()
		waitStatus(t, f, id, demiurge.DeliverySent)
	}
	outs := route.outbounds()
	seen := map[string]int{}
	for _, o := range outs {
		seen[o.DeliveryID]++
	}
	if len(outs) != rounds || len(seen) != rounds {
		t.Fatalf("sends=%d of %d deliveries, want each sent once: %v", len(outs), rounds, seen)
	}
}
