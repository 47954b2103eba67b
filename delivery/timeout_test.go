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

// hangingRoute never answers until released, and ignores its context.
type hangingRoute struct {
	release chan struct{}
	mu      sync.Mutex // guards calls
	calls   int
}

func (r *hangingRoute) Deliver(ctx context.Context, out demiurge.Outbound) error {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	<-r.release
	return nil
}

func (r *hangingRoute) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// terminalEvents returns the delivery's events after delivery.sending.
func terminalEvents(tb testing.TB, f *fixture, id string) []string {
	tb.Helper()
	evs, err := f.db.Events(context.Background(), demiurge.EventFilter{AggregateType: demiurge.AggDelivery, AggregateID: id})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Type != demiurge.EvDeliveryQueued && e.Type != demiurge.EvDeliverySending {
			out = append(out, e.Type)
		}
	}
	return out
}

// A route that hangs (and ignores cancellation) is bounded by SendTimeout;
// the delivery ends unknown, once, and is never tried again.
func TestDispatchHangingRouteTimesOut(t *testing.T) {
	ctx := context.Background()
	const timeout = 150 * time.Millisecond
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), delivery.Options{HostID: "host_test", SendTimeout: timeout})
	route := &hangingRoute{release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(route.release)
		}
	}
	t.Cleanup(release)
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("are you there?", demiurge.HistoryPersist))

	start := time.Now()
	status, err := f.rt.Dispatch(ctx, id)
	elapsed := time.Since(start)
	if err != nil || status != demiurge.DeliveryUnknown {
		t.Fatalf("Dispatch=%q, %v; want unknown", status, err)
	}
	if elapsed < timeout || elapsed > timeout+5*time.Second {
		t.Fatalf("Dispatch took %v with SendTimeout %v", elapsed, timeout)
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliveryUnknown || d.LastError != delivery.TimedOut || d.Attempts != 1 {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkUnknown || w.LastError != delivery.TimedOut || w.ClaimID != "" {
		t.Fatalf("work=%+v", w)
	}
	if got := terminalEvents(t, f, id); len(got) != 1 || got[0] != demiurge.EvDeliveryUnknown {
		t.Fatalf("terminal events=%v, want exactly one delivery.unknown", got)
	}
	// Unknown is final: neither Dispatch nor the retry loop sends it again.
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryUnknown {
		t.Fatalf("second Dispatch=%q, %v", s, err)
	}
	if ms := f.transcript(t); ms[0].Content.Text != "are you there?" {
		t.Fatalf("history message=%+v", ms[0].Content)
	}

	// The abandoned route call is still running: Wait reports it.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	wantCode(t, f.rt.Wait(wctx), demiurge.ETIMEOUT)
	release()
	wctx2, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	if err := f.rt.Wait(wctx2); err != nil {
		t.Fatalf("Wait after the route returned: %v", err)
	}
	if got := route.count(); got != 1 {
		t.Fatalf("route calls=%d, want 1", got)
	}
	// The late answer of the route changed nothing.
	if d := f.outbox(t, id); d.Status != demiurge.DeliveryUnknown {
		t.Fatalf("outbox after the late answer=%q", d.Status)
	}
}

// A route that honours cancellation and returns the deadline error is the
// same case: it was interrupted, so the delivery is unknown, not failed
// and not retried.
func TestDispatchTimeoutOfCooperativeRoute(t *testing.T) {
	ctx := context.Background()
	f := newFixtureWith(t, demiurgetest.MustOpenDB(t), delivery.Options{SendTimeout: 50 * time.Millisecond})
	route := &recordingRoute{block: true, entered: make(chan struct{})}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("slow", demiurge.HistoryTransient))
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryUnknown {
		t.Fatalf("Dispatch=%q, %v; want unknown", s, err)
	}
	if d := f.outbox(t, id); d.LastError != delivery.TimedOut {
		t.Fatalf("outbox=%+v", d)
	}
	if err := f.rt.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// panickingRoute panics inside Deliver.
type panickingRoute struct{}

func (panickingRoute) Deliver(context.Context, demiurge.Outbound) error {
	panic("bot token abc123 rejected")
}

// A panicking route fails its delivery without taking the process down,
// and its panic text (which may carry a credential) stays out of rows.
func TestDispatchRoutePanicFails(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.router.Bind(f.sessionID, panickingRoute{})
	id := f.enqueue(t, f.intent("boom", demiurge.HistoryTransient))
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryFailed {
		t.Fatalf("Dispatch=%q, %v; want failed", s, err)
	}
	if d := f.outbox(t, id); d.LastError != "route panicked: string" {
		t.Fatalf("last_error=%q", d.LastError)
	}
}
