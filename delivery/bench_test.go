package delivery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/store"
)

// countingStore counts the write transactions the delivery runtime makes:
// every method below is one store transaction.
type countingStore struct {
	*store.DB
	writes atomic.Int64
}

func (c *countingStore) Append(ctx context.Context, evs []demiurge.Event, key string, exp *demiurge.Expected) ([]demiurge.Event, error) {
	c.writes.Add(1)
	return c.DB.Append(ctx, evs, key, exp)
}

func (c *countingStore) ClaimDueWork(ctx context.Context, kind, owner string, lease time.Duration, limit int) ([]demiurge.WorkItem, error) {
	c.writes.Add(1)
	return c.DB.ClaimDueWork(ctx, kind, owner, lease, limit)
}

func (c *countingStore) StartDeliverySend(ctx context.Context, id, claim, owner, host string, lease time.Duration) (demiurge.Delivery, demiurge.WorkItem, bool, error) {
	c.writes.Add(1)
	return c.DB.StartDeliverySend(ctx, id, claim, owner, host, lease)
}

func (c *countingStore) FinishDeliverySend(ctx context.Context, id, claim, status, lastErr string, retryAt time.Time) (demiurge.Delivery, error) {
	c.writes.Add(1)
	return c.DB.FinishDeliverySend(ctx, id, claim, status, lastErr, retryAt)
}

// The turn's delivery costs three write transactions: Enqueue one,
// Dispatch to a live route two (start, outcome).
func TestEnqueueDispatchWriteTransactions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.router.Bind(f.sessionID, &recordingRoute{})
	cs := &countingStore{DB: f.db}
	rt := delivery.NewRuntime(cs, f.router, delivery.Options{HostID: "host_test"})
	id, err := rt.Enqueue(ctx, f.intent("hello", demiurge.HistoryPersist))
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.writes.Swap(0); got != 1 {
		t.Fatalf("Enqueue made %d write transactions, want 1", got)
	}
	if s, err := rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliverySent {
		t.Fatalf("Dispatch=%q, %v", s, err)
	}
	if got := cs.writes.Load(); got != 2 {
		t.Fatalf("Dispatch made %d write transactions, want 2", got)
	}
}

// BenchmarkEnqueueDispatch measures one turn delivery: Enqueue (persist
// policy: message + outbox + work item) and Dispatch to a live route.
func BenchmarkEnqueueDispatch(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	f.router.Bind(f.sessionID, &recordingRoute{})
	cs := &countingStore{DB: f.db}
	rt := delivery.NewRuntime(cs, f.router, delivery.Options{HostID: "host_bench"})
	in := f.intent("hello", demiurge.HistoryPersist)
	b.ResetTimer()
	for b.Loop() {
		id, err := rt.Enqueue(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if s, err := rt.Dispatch(ctx, id); err != nil || s != demiurge.DeliverySent {
			b.Fatalf("Dispatch=%q, %v", s, err)
		}
	}
	b.ReportMetric(float64(cs.writes.Load())/float64(b.N), "writetx/op")
}
