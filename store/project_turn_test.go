package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// A turn has exactly one terminal state: neither a repeated turn.started
// nor a second terminal event (appended under another key, as a reconciling
// Host does) changes a turn that has ended.
func TestTurnProjectionGuards(t *testing.T) {
	started := map[string]any{"session_id": "session_t", "core_id": "assistant", "host_id": "host_1", "input_ref": "msg_in"}
	restarted := map[string]any{"session_id": "session_other", "core_id": "other", "host_id": "host_2", "input_ref": "msg_2"}
	failure := map[string]any{"error": map[string]any{"code": "provider", "message": "boom"}}
	tests := []struct {
		name       string
		events     []demiurge.Event // appended one by one, each under its own key, after turn.started
		wantStatus demiurge.TurnStatus
		wantResult string
		wantErr    string // error code, "" for none
		wantHost   string
	}{
		{"started again after completed",
			[]demiurge.Event{ev(demiurge.AggTurn, "", demiurge.EvTurnCompleted, map[string]any{"result_ref": "msg_out"}),
				ev(demiurge.AggTurn, "", demiurge.EvTurnStarted, restarted)},
			demiurge.TurnCompleted, "msg_out", "", "host_1"},
		{"started again after failed",
			[]demiurge.Event{ev(demiurge.AggTurn, "", demiurge.EvTurnFailed, failure),
				ev(demiurge.AggTurn, "", demiurge.EvTurnStarted, restarted)},
			demiurge.TurnFailed, "", "provider", "host_1"},
		{"lost after completed",
			[]demiurge.Event{ev(demiurge.AggTurn, "", demiurge.EvTurnCompleted, map[string]any{"result_ref": "msg_out"}),
				ev(demiurge.AggTurn, "", demiurge.EvTurnLost, map[string]any{"error": map[string]any{"code": "lost", "message": "gone"}})},
			demiurge.TurnCompleted, "msg_out", "", "host_1"},
		{"cancelled after failed",
			[]demiurge.Event{ev(demiurge.AggTurn, "", demiurge.EvTurnFailed, failure),
				ev(demiurge.AggTurn, "", demiurge.EvTurnCancelled, map[string]any{"result_ref": "msg_late"})},
			demiurge.TurnFailed, "", "provider", "host_1"},
		{"completed after lost",
			[]demiurge.Event{ev(demiurge.AggTurn, "", demiurge.EvTurnLost, nil),
				ev(demiurge.AggTurn, "", demiurge.EvTurnCompleted, map[string]any{"status": "needs_user", "result_ref": "msg_out"})},
			demiurge.TurnLost, "", "", "host_1"},
		{"started again while running refreshes",
			[]demiurge.Event{ev(demiurge.AggTurn, "", demiurge.EvTurnStarted, map[string]any{"session_id": "session_t", "host_id": "host_2"})},
			demiurge.TurnRunning, "", "", "host_2"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
			ctx := context.Background()
			id := "turn_" + itoa(i)
			mustAppend(t, db, "", ev(demiurge.AggTurn, id, demiurge.EvTurnStarted, started))
			var firstEnd time.Time
			for _, e := range tt.events {
				clock.Advance(time.Second)
				e.AggregateID = id
				mustAppend(t, db, "", e)
				if firstEnd.IsZero() && e.Type != demiurge.EvTurnStarted {
					firstEnd = clock.Now()
				}
			}
			tr, err := db.Turn(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Status != tt.wantStatus || tr.ResultRef != tt.wantResult || tr.HostID != tt.wantHost {
				t.Fatalf("turn = %+v, want status %s result %q host %s", tr, tt.wantStatus, tt.wantResult, tt.wantHost)
			}
			if code, _ := tr.Error["code"].(string); code != tt.wantErr {
				t.Fatalf("turn error %v, want code %q", tr.Error, tt.wantErr)
			}
			if demiurge.TurnTerminal(tt.wantStatus) {
				if !tr.CompletedAt.Equal(firstEnd) || tr.SessionID != "session_t" || tr.CoreID != "assistant" {
					t.Fatalf("ended turn changed: %+v, completed_at want %v", tr, firstEnd)
				}
			} else if !tr.CompletedAt.IsZero() {
				t.Fatalf("running turn has completed_at %v", tr.CompletedAt)
			}
			// Every event stays in the log even when the projection ignores it.
			if evs, _ := db0Events(t, db, demiurge.AggTurn, id); len(evs) != 1+len(tt.events) {
				t.Fatalf("%d turn events, want %d", len(evs), 1+len(tt.events))
			}
		})
	}

	t.Run("terminal event without a turn", func(t *testing.T) {
		db := demiurgetest.MustOpenDB(t)
		mustAppend(t, db, "", ev(demiurge.AggTurn, "turn_ghost", demiurge.EvTurnCompleted, nil))
		_, err := db.Turn(context.Background(), "turn_ghost")
		wantCode(t, err, demiurge.ENOTFOUND)
	})
}

// Two writers (two handles on one file, as two Host processes) race to end
// the same turns with different terminal events and keys. Each turn ends in
// the state of the terminal event that was appended first.
func TestTurnTerminalRace(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	a := demiurgetest.MustOpenPath(t, path, store.Options{})
	b := demiurgetest.MustOpenPath(t, path, store.Options{})
	ctx := context.Background()
	const turns = 20
	for i := range turns {
		startTurn(t, a, "turn_"+itoa(i), "host_a")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*turns)
	for _, w := range []struct {
		db  *store.DB
		typ string
	}{{a, demiurge.EvTurnCompleted}, {b, demiurge.EvTurnLost}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range turns {
				id := "turn_" + itoa(i)
				_, err := w.db.Append(ctx, []demiurge.Event{ev(demiurge.AggTurn, id, w.typ, nil)}, w.typ+":"+id, nil)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range turns {
		id := "turn_" + itoa(i)
		evs, err := db0Events(t, a, demiurge.AggTurn, id)
		if err != nil || len(evs) != 3 {
			t.Fatalf("%s: %d events, %v; want started and two terminal events", id, len(evs), err)
		}
		want := map[string]demiurge.TurnStatus{demiurge.EvTurnCompleted: demiurge.TurnCompleted, demiurge.EvTurnLost: demiurge.TurnLost}[evs[1].Type]
		if got := turnStatus(t, a, id); got != want {
			t.Fatalf("%s status %s, want %s (first terminal event %s)", id, got, want, evs[1].Type)
		}
	}
}
