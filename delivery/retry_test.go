package delivery_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// scriptedRoute answers its calls with errs in turn, then nil.
type scriptedRoute struct {
	mu    sync.Mutex // guards errs, calls
	errs  []error
	calls int
}

func (r *scriptedRoute) Deliver(ctx context.Context, out demiurge.Outbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if len(r.errs) == 0 {
		return nil
	}
	err := r.errs[0]
	r.errs = r.errs[1:]
	return err
}

func (r *scriptedRoute) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// newClockFixture is a fixture whose store and Runtime read clock.
func newClockFixture(tb testing.TB, clock *demiurgetest.Clock, opts delivery.Options) *fixture {
	tb.Helper()
	db := demiurgetest.MustOpenPath(tb, filepath.Join(tb.TempDir(), "runtime.sqlite3"), store.Options{Now: clock.Now})
	opts.Now = clock.Now
	return newFixtureWith(tb, db, opts)
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{demiurge.Errorf(demiurge.EUNAVAILABLE, "offline"), true},
		{demiurge.Errorf(demiurge.ETIMEOUT, "upstream timed out"), true},
		{demiurge.WrapError(demiurge.EUNAVAILABLE, errors.New("dial"), "gateway down"), true},
		{demiurge.Errorf(demiurge.EUNAUTHORIZED, "refused"), false},
		{demiurge.Errorf(demiurge.EINVALID, "too long"), false},
		{errors.New("uncoded"), false},
		{context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		if got := delivery.Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v)=%v, want %v", tt.err, got, tt.want)
		}
	}
}

// A transient failure queues the delivery again with a backoff; it is sent
// on a later attempt, once.
func TestDispatchTransientRetriedThenSent(t *testing.T) {
	ctx := context.Background()
	clock := demiurgetest.NewClock(time.Now().UTC().Truncate(time.Millisecond))
	f := newClockFixture(t, clock, delivery.Options{HostID: "host_test", RetryBase: time.Minute, RetryMax: 10 * time.Minute})
	route := &scriptedRoute{errs: []error{
		demiurge.Errorf(demiurge.EUNAVAILABLE, "chat adapter offline"),
		demiurge.Errorf(demiurge.ETIMEOUT, "chat upstream timed out"),
	}}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("hello", demiurge.HistoryPersist))

	checkRetry := func(attempt int, lastErr string, minWait, maxWait time.Duration) {
		t.Helper()
		d := f.outbox(t, id)
		if d.Status != demiurge.DeliveryQueued || d.Attempts != attempt || d.LastError != lastErr {
			t.Fatalf("outbox after attempt %d=%+v, want queued with last_error %q", attempt, d, lastErr)
		}
		w := f.work(t, id)
		if w.Status != demiurge.WorkRetryScheduled || w.Attempts != attempt || w.ClaimID != "" || w.LastError != lastErr {
			t.Fatalf("work after attempt %d=%+v", attempt, w)
		}
		if wait := w.NextAttemptAt.Sub(clock.Now()); wait < minWait || wait > maxWait {
			t.Fatalf("next attempt in %v, want within [%v, %v]", wait, minWait, maxWait)
		}
	}

	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryQueued {
		t.Fatalf("first Dispatch=%q, %v; want queued for a retry", s, err)
	}
	checkRetry(1, "chat adapter offline", 30*time.Second, time.Minute)

	// Not due yet: nothing is sent, nothing recorded.
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryQueued || route.count() != 1 {
		t.Fatalf("early Dispatch=%q, %v, calls %d; want queued and no call", s, err, route.count())
	}
	if rs, err := f.rt.DispatchTurn(ctx, f.turnID); err != nil || len(rs) != 1 || rs[0].Status != demiurge.DeliveryQueued {
		t.Fatalf("DispatchTurn=%v, %v; want the waiting delivery reported queued", rs, err)
	}
	checkRetry(1, "chat adapter offline", 30*time.Second, time.Minute)

	clock.Advance(time.Minute)
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliveryQueued {
		t.Fatalf("second Dispatch=%q, %v; want queued again", s, err)
	}
	checkRetry(2, "chat upstream timed out", time.Minute, 2*time.Minute)

	clock.Advance(2 * time.Minute)
	if s, err := f.rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliverySent {
		t.Fatalf("third Dispatch=%q, %v; want sent", s, err)
	}
	if got := route.count(); got != 3 {
		t.Fatalf("route calls=%d, want 3", got)
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliverySent || d.Attempts != 3 || d.LastError != "" || d.SentAt.IsZero() {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkSucceeded || w.Attempts != 3 {
		t.Fatalf("work=%+v", w)
	}
	// The history message was never touched.
	if ms := f.transcript(t); ms[0].Content.Metadata["delivery_status"] != demiurge.DeliveryQueued || f.messageEdits(t) != 0 {
		t.Fatalf("history message=%+v edits %d; a retried and sent delivery leaves it alone", ms[0].Content, f.messageEdits(t))
	}
	evs, err := f.db.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggDelivery, AggregateID: id})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{demiurge.EvDeliveryQueued,
		demiurge.EvDeliverySending, demiurge.EvDeliveryRetryScheduled,
		demiurge.EvDeliverySending, demiurge.EvDeliveryRetryScheduled,
		demiurge.EvDeliverySending, demiurge.EvDeliverySent}
	if got := types(evs); !slices.Equal(got, want) {
		t.Fatalf("delivery events=%v, want %v", got, want)
	}
}

// After MaxAttempts transient failures the delivery fails for good.
func TestDispatchTransientExhausted(t *testing.T) {
	ctx := context.Background()
	clock := demiurgetest.NewClock(time.Now().UTC().Truncate(time.Millisecond))
	f := newClockFixture(t, clock, delivery.Options{MaxAttempts: 3, RetryBase: time.Second})
	offline := demiurge.Errorf(demiurge.EUNAVAILABLE, "chat adapter offline")
	route := &scriptedRoute{errs: []error{offline, offline, offline, offline}}
	f.router.Bind(f.sessionID, route)
	id := f.enqueue(t, f.intent("hello", demiurge.HistoryModelHidden))

	var statuses []string
	for range 3 {
		s, err := f.rt.Dispatch(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, s)
		clock.Advance(time.Minute)
	}
	if want := []string{"queued", "queued", "failed"}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses=%v, want %v", statuses, want)
	}
	if s, _ := f.rt.Dispatch(ctx, id); s != demiurge.DeliveryFailed || route.count() != 3 {
		t.Fatalf("Dispatch after failure=%q with %d calls; want failed and 3 calls", s, route.count())
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliveryFailed || d.Attempts != 3 || d.LastError != "chat adapter offline" {
		t.Fatalf("outbox=%+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkFailed || w.Attempts != 3 || w.CompletedAt.IsZero() {
		t.Fatalf("work=%+v", w)
	}
	ms := f.transcript(t)
	if ms[0].Content.Text != "hello" || ms[0].Content.Metadata["delivery_status"] != demiurge.DeliveryFailed ||
		ms[0].Content.Metadata["delivery_error"] != "chat adapter offline" {
		t.Fatalf("history message=%+v", ms[0].Content)
	}
}
