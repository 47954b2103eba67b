package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// TestClaimWorkByStatus walks ClaimWork over every state an item can be in,
// with its claim's lease live or lapsed.
func TestClaimWorkByStatus(t *testing.T) {
	tests := []struct {
		name    string
		to      string // status reached after a first claim ("" : left queued, claimed: left claimed)
		expire  bool   // let the first claim's lease lapse before the second claim
		wantOK  bool
		wantNow string // status after the second ClaimWork
	}{
		{"queued", "", false, true, demiurge.WorkClaimed},
		{"claimed live", demiurge.WorkClaimed, false, false, demiurge.WorkClaimed},
		{"claimed expired", demiurge.WorkClaimed, true, true, demiurge.WorkClaimed},
		{"running live", demiurge.WorkRunning, false, false, demiurge.WorkRunning},
		{"running expired", demiurge.WorkRunning, true, true, demiurge.WorkClaimed},
		{"sending live", demiurge.WorkSending, false, false, demiurge.WorkSending},
		{"sending expired", demiurge.WorkSending, true, false, demiurge.WorkSending},
		{"retry scheduled", demiurge.WorkRetryScheduled, false, true, demiurge.WorkClaimed},
		{"succeeded", demiurge.WorkSucceeded, false, false, demiurge.WorkSucceeded},
		{"unknown", demiurge.WorkUnknown, true, false, demiurge.WorkUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
			ctx := context.Background()
			before := enqueue(t, db, "work_1", demiurge.WorkKindDeliverySend)
			if tt.to != "" {
				first, ok, err := db.ClaimWork(ctx, "work_1", "first", time.Minute)
				if err != nil || !ok {
					t.Fatalf("first claim: ok=%v err=%v", ok, err)
				}
				before = first
				if tt.to != demiurge.WorkClaimed {
					var f demiurge.WorkFields
					to := tt.to
					if to == demiurge.WorkRetryScheduled {
						to, f.RetryAt = demiurge.WorkFailed, clock.Now()
					}
					if before, err = db.TransitionWork(ctx, "work_1", first.ClaimID, to, f); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.expire {
				clock.Advance(2 * time.Minute)
			}
			evs, _ := db0Events(t, db, demiurge.AggWork, "work_1")

			got, ok, err := db.ClaimWork(ctx, "work_1", "second", time.Minute)
			if err != nil {
				t.Fatalf("ClaimWork: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("ClaimWork ok = %v, want %v (item was %s)", ok, tt.wantOK, before.Status)
			}
			after, err := db.WorkItem(ctx, "work_1")
			if err != nil {
				t.Fatal(err)
			}
			if after.Status != tt.wantNow {
				t.Fatalf("status after claim = %s, want %s", after.Status, tt.wantNow)
			}
			evs2, _ := db0Events(t, db, demiurge.AggWork, "work_1")
			if !ok {
				// A refused claim writes nothing and leaves the holder's claim.
				if len(evs2) != len(evs) || after.ClaimID != before.ClaimID || after.Attempts != before.Attempts {
					t.Fatalf("refused claim changed the item: %d→%d events, %+v → %+v", len(evs), len(evs2), before, after)
				}
				return
			}
			if got.OwnerID != "second" || got.ClaimID == before.ClaimID || got.Attempts != before.Attempts+1 {
				t.Fatalf("claim = %+v, from %+v", got, before)
			}
		})
	}
}

// An item in sending stays with its sender however late it is: a second
// claimer never gets it, the sender can still finish it, and if the sender
// is gone only recovery moves it on, to unknown.
func TestClaimWorkNeverResends(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	for _, id := range []string{"work_finished", "work_abandoned"} {
		enqueue(t, db, id, demiurge.WorkKindDeliverySend)
		c, _, _ := db.ClaimWork(ctx, id, "sender", time.Minute)
		if _, err := db.TransitionWork(ctx, id, c.ClaimID, demiurge.WorkSending, demiurge.WorkFields{}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour)
	for _, id := range []string{"work_finished", "work_abandoned"} {
		if w, ok, err := db.ClaimWork(ctx, id, "thief", time.Minute); ok || err != nil {
			t.Fatalf("%s: re-claimed an item in sending with an expired lease: %+v ok=%v err=%v", id, w, ok, err)
		}
	}
	if due, err := db.ClaimDueWork(ctx, "", "thief", time.Minute, 10); err != nil || len(due) != 0 {
		t.Fatalf("ClaimDueWork = %v, %v; want nothing", due, err)
	}

	w, _ := db.WorkItem(ctx, "work_finished")
	if _, err := db.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkSucceeded, demiurge.WorkFields{ExternalRef: "ext_1"}); err != nil {
		t.Fatalf("the sender lost its claim: %v", err)
	}
	rep, err := db.RecoverWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.MarkedUnknown != 1 {
		t.Fatalf("recovery = %+v, want one item marked unknown", rep)
	}
	for id, want := range map[string]string{"work_finished": demiurge.WorkSucceeded, "work_abandoned": demiurge.WorkUnknown} {
		if w, _ := db.WorkItem(ctx, id); w.Status != want {
			t.Fatalf("%s status %s, want %s", id, w.Status, want)
		}
		if _, ok, _ := db.ClaimWork(ctx, id, "thief", time.Minute); ok {
			t.Fatalf("%s: claimed a final item", id)
		}
	}
}
