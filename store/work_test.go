package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func enqueue(tb testing.TB, db *store.DB, id, kind string) demiurge.WorkItem {
	tb.Helper()
	w, err := db.EnqueueWork(context.Background(), demiurge.WorkItem{ID: id, Kind: kind, OwnerSessionID: "session_1",
		Payload: map[string]any{"id": id}}, "")
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func TestEnqueueWorkIdempotent(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	w := enqueue(t, db, "work_1", demiurge.WorkKindTaskCompletion)
	if w.Status != "queued" || w.Kind != demiurge.WorkKindTaskCompletion || w.Payload["id"] != "work_1" {
		t.Fatalf("enqueued %+v", w)
	}
	if _, _, err := db.ClaimWork(ctx, "work_1", "owner", time.Minute); err != nil {
		t.Fatal(err)
	}
	// Re-enqueueing (same default key) must not reset the claimed item.
	w2 := enqueue(t, db, "work_1", demiurge.WorkKindTaskCompletion)
	if w2.Status != "claimed" {
		t.Fatalf("re-enqueue reset the item to %s", w2.Status)
	}
	if evs, _ := db0Events(t, db, demiurge.AggWork, "work_1"); len(evs) != 2 {
		t.Fatalf("%d work events, want enqueued+claimed", len(evs))
	}
	_, err := db.EnqueueWork(ctx, demiurge.WorkItem{ID: "x"}, "")
	wantCode(t, err, demiurge.EINVALID)
	_, err = db.WorkItem(ctx, "work_missing")
	wantCode(t, err, demiurge.ENOTFOUND)
	if err.Error() != "work item not found: work_missing" {
		t.Fatalf("error %q", err)
	}
}

func TestClaimWork(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	enqueue(t, db, "work_1", demiurge.WorkKindDeliverySend)

	if _, ok, err := db.ClaimWork(ctx, "work_missing", "a", time.Minute); ok || err != nil {
		t.Fatalf("claim of a missing item: ok=%v err=%v", ok, err)
	}
	c1, ok, err := db.ClaimWork(ctx, "work_1", "a", time.Minute)
	if err != nil || !ok || c1.Status != "claimed" || c1.Attempts != 1 || c1.OwnerID != "a" ||
		demiurge.IDPrefix(c1.ClaimID) != "claim" || !c1.LeaseExpiresAt.Equal(clock.Now().Add(time.Minute)) {
		t.Fatalf("first claim %+v ok=%v err=%v", c1, ok, err)
	}
	if _, ok, _ := db.ClaimWork(ctx, "work_1", "b", time.Minute); ok {
		t.Fatal("claimed an item under a live lease")
	}
	clock.Advance(2 * time.Minute)
	c2, ok, err := db.ClaimWork(ctx, "work_1", "b", time.Minute)
	if err != nil || !ok || c2.ClaimID == c1.ClaimID || c2.Attempts != 2 || c2.OwnerID != "b" {
		t.Fatalf("claim after expiry %+v ok=%v err=%v", c2, ok, err)
	}
	// The first claimer is now stale.
	_, err = db.TransitionWork(ctx, "work_1", c1.ClaimID, demiurge.WorkRunning, demiurge.WorkFields{})
	wantCode(t, err, demiurge.ECONFLICT)
	if err.Error() != "stale durable claim for work work_1" {
		t.Fatalf("error %q", err)
	}
	if _, err := db.TransitionWork(ctx, "work_1", c2.ClaimID, demiurge.WorkSucceeded, demiurge.WorkFields{ExternalRef: "ext"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.ClaimWork(ctx, "work_1", "c", time.Minute); ok {
		t.Fatal("claimed a terminal item")
	}
}

func TestClaimDueWork(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	enqueue(t, db, "work_old", demiurge.WorkKindScheduleFire)
	clock.Advance(time.Second)
	enqueue(t, db, "work_other_kind", demiurge.WorkKindTaskCompletion)
	clock.Advance(time.Second)
	enqueue(t, db, "work_new", demiurge.WorkKindScheduleFire)
	if _, err := db.EnqueueWork(ctx, demiurge.WorkItem{ID: "work_later", Kind: demiurge.WorkKindScheduleFire,
		NextAttemptAt: clock.Now().Add(time.Hour)}, ""); err != nil {
		t.Fatal(err)
	}
	sending := enqueue(t, db, "work_sending", demiurge.WorkKindScheduleFire)
	c, _, _ := db.ClaimWork(ctx, sending.ID, "x", time.Second)
	if _, err := db.TransitionWork(ctx, sending.ID, c.ClaimID, demiurge.WorkSending, demiurge.WorkFields{}); err != nil {
		t.Fatal(err)
	}

	got, err := db.ClaimDueWork(ctx, demiurge.WorkKindScheduleFire, "worker", time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(got, func(w demiurge.WorkItem) string { return w.ID }); len(g) != 2 || g[0] != "work_old" || g[1] != "work_new" {
		t.Fatalf("due claims %v, want [work_old work_new]", g)
	}
	before := db.Commits()
	if again, _ := db.ClaimDueWork(ctx, demiurge.WorkKindScheduleFire, "worker", time.Minute, 10); len(again) != 0 {
		t.Fatalf("claimed live claims again: %v", again)
	}
	if n := db.Commits() - before; n != 0 {
		t.Fatalf("a poll that found nothing due committed %d write transactions", n)
	}
	clock.Advance(2 * time.Hour) // leases expire, work_later becomes due; sending is never re-claimed
	got, _ = db.ClaimDueWork(ctx, "", "worker2", time.Minute, 10)
	if g := ids(got, func(w demiurge.WorkItem) string { return w.ID }); len(g) != 4 || g[0] != "work_old" || g[3] != "work_later" {
		t.Fatalf("after expiry %v", g)
	}
	for _, w := range got {
		if w.ID == "work_sending" {
			t.Fatal("re-claimed an item in sending")
		}
	}
	if one, _ := db.ClaimDueWork(ctx, "", "w", time.Minute, 0); len(one) != 0 {
		t.Fatalf("nothing due, claimed %v", one)
	}
}

func TestTransitionWork(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	enqueue(t, db, "work_1", demiurge.WorkKindDeliverySend)
	c, _, _ := db.ClaimWork(ctx, "work_1", "w", time.Minute)

	w, err := db.TransitionWork(ctx, "work_1", c.ClaimID, demiurge.WorkRunning, demiurge.WorkFields{})
	if err != nil || w.Status != "running" {
		t.Fatalf("running: %+v %v", w, err)
	}
	clock.Advance(30 * time.Second)
	w, err = db.TransitionWork(ctx, "work_1", c.ClaimID, demiurge.WorkHeartbeat, demiurge.WorkFields{Lease: 5 * time.Minute})
	if err != nil || w.Status != "running" || !w.LeaseExpiresAt.Equal(clock.Now().Add(5*time.Minute)) {
		t.Fatalf("heartbeat: %+v %v", w, err)
	}
	retry := clock.Now().Add(10 * time.Minute)
	w, err = db.TransitionWork(ctx, "work_1", c.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{LastError: "503", RetryAt: retry})
	if err != nil || w.Status != "retry_scheduled" || w.ClaimID != "" || !w.NextAttemptAt.Equal(retry) || w.LastError != "503" || !w.CompletedAt.IsZero() {
		t.Fatalf("retry: %+v %v", w, err)
	}
	_, err = db.TransitionWork(ctx, "work_1", c.ClaimID, demiurge.WorkRunning, demiurge.WorkFields{})
	wantCode(t, err, demiurge.ECONFLICT) // the retry released the claim

	clock.Advance(time.Hour)
	c2, ok, _ := db.ClaimWork(ctx, "work_1", "w", time.Minute)
	if !ok {
		t.Fatal("could not re-claim a retry_scheduled item")
	}
	w, err = db.TransitionWork(ctx, "work_1", c2.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{LastError: "fatal"})
	if err != nil || w.Status != "failed" || w.CompletedAt.IsZero() {
		t.Fatalf("failed: %+v %v", w, err)
	}
	_, err = db.TransitionWork(ctx, "work_1", c2.ClaimID, demiurge.WorkSucceeded, demiurge.WorkFields{})
	wantCode(t, err, demiurge.ECONFLICT)
	if err.Error() != "durable work cannot be overwritten: work_1" {
		t.Fatalf("error %q", err)
	}

	enqueue(t, db, "work_2", demiurge.WorkKindDeliverySend)
	c3, _, _ := db.ClaimWork(ctx, "work_2", "w", time.Minute)
	if w, err := db.TransitionWork(ctx, "work_2", c3.ClaimID, demiurge.WorkUnknown, demiurge.WorkFields{LastError: "timeout"}); err != nil || w.Status != "unknown" {
		t.Fatalf("unknown: %+v %v", w, err)
	}
	_, err = db.TransitionWork(ctx, "work_2", c3.ClaimID, demiurge.WorkSucceeded, demiurge.WorkFields{})
	wantCode(t, err, demiurge.ECONFLICT) // unknown is final too

	_, err = db.TransitionWork(ctx, "work_2", c3.ClaimID, "exploded", demiurge.WorkFields{})
	wantCode(t, err, demiurge.EINVALID)
	_, err = db.TransitionWork(ctx, "work_none", "claim_x", demiurge.WorkRunning, demiurge.WorkFields{})
	wantCode(t, err, demiurge.ENOTFOUND)
	if evs, _ := db0Events(t, db, demiurge.AggWork, "work_1"); len(evs) != 7 {
		t.Fatalf("work_1 has %d events, want 7 (every transition is an event)", len(evs))
	}
}

func TestRecoverWork(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	claim := func(id, status string, lease time.Duration) demiurge.WorkItem {
		enqueue(t, db, id, demiurge.WorkKindDeliverySend)
		c, ok, err := db.ClaimWork(ctx, id, "w", lease)
		if err != nil || !ok {
			t.Fatalf("claim %s: %v", id, err)
		}
		if status != demiurge.WorkClaimed {
			if _, err := db.TransitionWork(ctx, id, c.ClaimID, status, demiurge.WorkFields{}); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	// A sending delivery whose outbox row is still sending.
	mustAppend(t, db, "", ev(demiurge.AggDelivery, "delivery_s", demiurge.EvDeliveryQueued, map[string]any{"channel": "x"}),
		ev(demiurge.AggDelivery, "delivery_s", demiurge.EvDeliverySending, nil))
	claim("delivery_s", demiurge.WorkSending, time.Minute)
	claim("work_running", demiurge.WorkRunning, time.Minute)
	claim("work_claimed", demiurge.WorkClaimed, time.Minute)
	claim("work_live", demiurge.WorkRunning, time.Hour)
	enqueue(t, db, "work_queued", demiurge.WorkKindDeliverySend)
	enqueue(t, db, "work_corrupt", demiurge.WorkKindDeliverySend)
	if _, err := rawDB(t, db.OpenedWith()).Exec(`UPDATE runtime_work_items SET payload_json = 'not json' WHERE work_id = 'work_corrupt'`); err != nil {
		t.Fatal(err)
	}

	clock.Advance(10 * time.Minute)
	rep, err := db.RecoverWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := store.WorkRecovery{Recovered: 2, Deferred: 2, Unknown: 1, MarkedUnknown: 1, Corrupt: 1, DeliveriesUnknown: 1}
	if rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	check := func(id, status, lastErr string) {
		t.Helper()
		w, _ := db.WorkItem(ctx, id)
		if w.Status != status || w.LastError != lastErr {
			t.Fatalf("%s: status %s last_error %q; want %s %q", id, w.Status, w.LastError, status, lastErr)
		}
	}
	check("delivery_s", "unknown", "expired while sending")
	check("work_running", "retry_scheduled", "expired claim recovered")
	check("work_claimed", "retry_scheduled", "expired claim recovered")
	check("work_live", "running", "")
	check("work_queued", "queued", "")
	check("work_corrupt", "corrupt", "corrupt payload_json")
	if w, _ := db.WorkItem(ctx, "work_running"); w.ClaimID != "" || !w.LeaseExpiresAt.IsZero() {
		t.Fatalf("recovered item keeps its claim: %+v", w)
	}
	if d, _ := db.Delivery(ctx, "delivery_s"); d.Status != "unknown" || d.LastError != "expired while sending" {
		t.Fatalf("outbox row %+v", d)
	}

	// A second recovery changes nothing and appends nothing.
	head := headSeq(t, db)
	rep2, err := db.RecoverWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Recovered+rep2.MarkedUnknown+rep2.Corrupt+rep2.DeliveriesUnknown != 0 || rep2.Unknown != 1 {
		t.Fatalf("second recovery %+v", rep2)
	}
	if headSeq(t, db) != head {
		t.Fatal("second recovery appended events")
	}
	for _, typ := range []string{demiurge.EvWorkUnknown, demiurge.EvWorkRecovered, demiurge.EvWorkCorrupt} {
		if evs, _ := db.Events(ctx, demiurge.EventFilter{Type: typ}); len(evs) == 0 {
			t.Fatalf("no %s event: recovery must go through events", typ)
		}
	}
}
