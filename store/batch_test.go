package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// AppendBatches is one transaction: every batch keeps its own key and
// guard, and one failing guard writes nothing of any batch.
func TestAppendBatchesAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	mustAppend(t, db, "", ev("test", "a", "test.event", nil))
	before := db.Commits()
	stored, err := db.AppendBatches(ctx, []demiurge.EventBatch{
		{Events: []demiurge.Event{ev("test", "a", "test.event", nil)}, Expected: &demiurge.Expected{AggregateType: "test", AggregateID: "a", LastSeq: 1}},
		{},
		{Events: []demiurge.Event{ev("test", "b", "test.event", nil), ev("test", "b", "test.event", nil)}, IdempotencyKey: "k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Commits() - before; got != 1 {
		t.Fatalf("AppendBatches committed %d transactions, want 1", got)
	}
	if len(stored) != 3 || len(stored[0]) != 1 || len(stored[1]) != 0 || len(stored[2]) != 2 || stored[2][1].IdempotencyKey != "k" {
		t.Fatalf("stored %+v", stored)
	}
	// The key returns what it stored the first time, as Append does.
	again, err := db.AppendBatches(ctx, []demiurge.EventBatch{{Events: []demiurge.Event{ev("test", "c", "test.event", nil)}, IdempotencyKey: "k"}})
	if err != nil || len(again[0]) != 2 || again[0][0].EventID != stored[2][0].EventID {
		t.Fatalf("repeated key: %+v, %v", again, err)
	}
	_, err = db.AppendBatches(ctx, []demiurge.EventBatch{
		{Events: []demiurge.Event{ev("test", "d", "test.event", nil)}},
		{Events: []demiurge.Event{ev("test", "a", "test.event", nil)}, Expected: &demiurge.Expected{AggregateType: "test", AggregateID: "a", LastSeq: 1}},
	})
	wantCode(t, err, demiurge.ECONFLICT)
	if seq, err := db.LastSeq(ctx, "test", "d"); err != nil || seq != 0 {
		t.Fatalf("a failed guard kept the batch before it: seq %d, %v", seq, err)
	}
}

// The lease and the events given with it commit together, and so do the
// release and the events given with it.
func TestSessionLeaseWithBatches(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	h, err := db.StartHost(ctx, store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	before := db.Commits()
	stored, err := db.AcquireSessionLeaseWith(ctx, "session_x", "turn_a", h.ID(), []demiurge.EventBatch{{Events: []demiurge.Event{ev("test", "a", "test.started", nil)}}})
	if err != nil || len(stored) != 1 || len(stored[0]) != 1 || stored[0][0].Seq == 0 {
		t.Fatalf("acquire: %+v, %v", stored, err)
	}
	if _, err := db.ReleaseSessionLeaseWith(ctx, "session_x", "turn_a", h.ID(), []demiurge.EventBatch{{Events: []demiurge.Event{ev("test", "a", "test.ended", nil)}}}); err != nil {
		t.Fatal(err)
	}
	if got := db.Commits() - before; got != 2 {
		t.Fatalf("acquire and release committed %d transactions, want 2", got)
	}
	if seq, err := db.LastSeq(ctx, "test", "a"); err != nil || seq != stored[0][0].Seq+1 {
		t.Fatalf("events of the lease: last seq %d, %v", seq, err)
	}
	// Released: another holder takes the lease at once.
	if _, err := db.AcquireSessionLeaseWith(ctx, "session_x", "turn_b", h.ID(), nil); err != nil {
		t.Fatal(err)
	}
	// A failing batch keeps the lease held.
	_, err = db.ReleaseSessionLeaseWith(ctx, "session_x", "turn_b", h.ID(), []demiurge.EventBatch{
		{Events: []demiurge.Event{ev("test", "a", "test.ended", nil)}, Expected: &demiurge.Expected{AggregateType: "test", AggregateID: "a", LastSeq: 1}},
	})
	wantCode(t, err, demiurge.ECONFLICT)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	h2, err := db.StartHost(ctx, store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AcquireSessionLeaseWith(short, "session_x", "turn_c", h2.ID(), nil); demiurge.ErrorCode(err) != demiurge.ETIMEOUT {
		t.Fatalf("lease after a failed release: %v, want ETIMEOUT (still held)", err)
	}
}

// Closing leaves the log in place for the next process instead of
// checkpointing and deleting it, and the next open reads it back.
func TestCloseKeepsLog(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "the WAL log a closed SQLite file keeps")
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	mustAppend(t, db, "", ev("test", "x", "test.event", nil))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path + "-wal")
	if err != nil || st.Size() == 0 {
		t.Fatalf("log after Close: %v, %v; want it kept", st, err)
	}
	db = demiurgetest.MustOpenPath(t, path, store.Options{})
	if seq, err := db.LastSeq(context.Background(), "test", "x"); err != nil || seq != 1 {
		t.Fatalf("LastSeq after reopen = %d, %v; want 1", seq, err)
	}
}
