package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// recordingObserver keeps what it was told; on switches it.
type recordingObserver struct {
	on atomic.Bool
	mu sync.Mutex
	tx [][]demiurge.Event
}

func (o *recordingObserver) Observing() bool { return o.on.Load() }

func (o *recordingObserver) Committed(evs []demiurge.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tx = append(o.tx, evs)
}

func (o *recordingObserver) seqs() [][]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out [][]int64
	for _, tx := range o.tx {
		var s []int64
		for _, e := range tx {
			s = append(s, e.Seq)
		}
		out = append(out, s)
	}
	return out
}

func msgEvent(id string) demiurge.Event {
	return ev(demiurge.AggMessage, id, demiurge.EvMessagePersisted, map[string]any{"session_id": "session_pub", "content": map[string]any{"text": id}})
}

// The observer hears of each committed transaction once, with exactly the
// events it inserted, in seq order; an idle observer hears of nothing, a
// batch answered from its idempotency key and one undone to its savepoint
// publish nothing, and a failed transaction publishes nothing.
func TestCommitObserver(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	o := &recordingObserver{}
	db.SetCommitObserver(o)

	mustAppend(t, db, "", msgEvent("msg_idle")) // not observing
	if got := o.seqs(); len(got) != 0 {
		t.Fatalf("an idle observer was told %v", got)
	}
	o.on.Store(true)
	a := mustAppend(t, db, "key_a", msgEvent("msg_a1"), msgEvent("msg_a2"))
	mustAppend(t, db, "key_a", msgEvent("msg_a1")) // idempotent: nothing new
	if _, err := db.AppendBatches(ctx, []demiurge.EventBatch{
		{Events: []demiurge.Event{msgEvent("msg_b")}},
		{Events: []demiurge.Event{msgEvent("msg_c")}, Expected: &demiurge.Expected{AggregateType: demiurge.AggMessage, AggregateID: "msg_c", LastSeq: 7}},
	}); demiurge.ErrorCode(err) != demiurge.ECONFLICT {
		t.Fatalf("guarded batch: %v", err)
	}
	submitTask(t, db, "task_pub", nil)
	var kept []demiurge.Event
	if err := db.AppendTaskBatches(ctx, []demiurge.EventBatch{
		{Events: []demiurge.Event{ev(demiurge.AggTask, "task_pub", demiurge.EvTaskStarted, nil)},
			Expected: &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: "task_pub", LastSeq: 999}},
		{Events: []demiurge.Event{ev(demiurge.AggTask, "task_pub", demiurge.EvTaskLog, map[string]any{"text": "x"})}},
	}, func(i int, stored []demiurge.Event, _ demiurge.Task, err error) {
		if i == 1 && err == nil {
			kept = stored
		}
	}); err != nil {
		t.Fatal(err)
	}
	got := o.seqs()
	if len(got) != 3 || len(got[0]) != 2 || got[0][0] != a[0].Seq || got[0][1] != a[1].Seq || len(got[1]) != 1 {
		t.Fatalf("published %v", got)
	}
	if len(kept) != 1 || len(got[2]) != 1 || got[2][0] != kept[0].Seq {
		t.Fatalf("task batches published %v, kept %v", got[2], kept)
	}

	db.SetCommitObserver(nil)
	mustAppend(t, db, "", msgEvent("msg_after"))
	if n := len(o.seqs()); n != 3 {
		t.Fatalf("a removed observer was told again (%d)", n)
	}
}

// Concurrent writers publish in commit order.
func TestCommitObserverOrder(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	o := &recordingObserver{}
	o.on.Store(true)
	db.SetCommitObserver(o)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				mustAppend(t, db, "", msgEvent(demiurge.NewID("msg")))
			}
		}()
	}
	wg.Wait()
	var last int64
	n := 0
	for _, tx := range o.seqs() {
		for _, s := range tx {
			if s <= last {
				t.Fatalf("seq %d published after %d", s, last)
			}
			last = s
			n++
		}
	}
	if n != 100 {
		t.Fatalf("%d events published, want 100", n)
	}
}
