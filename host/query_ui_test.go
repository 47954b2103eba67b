package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// TestTurnEventsAreTheTurnsOwn: while two sessions run turns at once, the
// events of one turn are exactly its own (its turn, message, tool call and
// delivery events), and a session's events are its own, newest last.
func TestTurnEventsAreTheTurnsOwn(t *testing.T) {
	h := mustOpen(t)
	ctx := context.Background()
	var mu sync.Mutex
	bySession := map[string][]turn.Result{}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := ""
			for n := range 5 {
				res, err := h.Run(ctx, turn.Request{Text: fmt.Sprintf("s%d m%d", i, n), SessionID: sid, NewSession: sid == "",
					Channel: "test", ConversationKey: fmt.Sprintf("test:c:%d", i)})
				if err != nil || res.Outcome != turn.OutcomeCompleted {
					t.Errorf("turn: %+v %v", res, err)
					return
				}
				sid = res.SessionID
				mu.Lock()
				bySession[sid] = append(bySession[sid], res)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bySession) != 2 {
		t.Fatalf("%d sessions", len(bySession))
	}
	for sid, results := range bySession {
		for _, res := range results {
			evs, err := h.TurnEvents(ctx, res.TurnID)
			if err != nil {
				t.Fatal(err)
			}
			types := map[string]int{}
			owners := map[string]string{} // aggregate → the turn its first event names
			for i, e := range evs {
				if i > 0 && e.Seq <= evs[i-1].Seq {
					t.Fatalf("turn %s: events out of order", res.TurnID)
				}
				owner := turnOf(t, e)
				if owner == "" { // a later event of a delivery or message: its first event named the turn
					owner = owners[e.AggregateID]
				}
				owners[e.AggregateID] = owner
				if owner != res.TurnID {
					t.Fatalf("turn %s has %s %s of turn %q", res.TurnID, e.Type, e.AggregateID, owner)
				}
				types[e.Type]++
			}
			if types[demiurge.EvTurnStarted] != 1 || types[demiurge.EvTurnCompleted] != 1 || types[demiurge.EvMessagePersisted] != 2 {
				t.Fatalf("turn %s events %v", res.TurnID, types)
			}
		}
		evs, err := h.SessionEvents(ctx, sid, demiurge.EvTurnStarted, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 3 || evs[2].AggregateID != results[4].TurnID || evs[0].AggregateID != results[2].TurnID {
			t.Fatalf("session %s newest turn.started: %d events", sid, len(evs))
		}
		all, err := h.SessionEvents(ctx, sid, "", demiurge.MaxEventLimit)
		if err != nil {
			t.Fatal(err)
		}
		created := 0
		for _, e := range all {
			if e.Type == demiurge.EvSessionCreated {
				created++
				if e.AggregateID != sid {
					t.Fatalf("session %s shows the creation of %s", sid, e.AggregateID)
				}
			}
		}
		if created != 1 {
			t.Fatalf("session %s: %d session.created events", sid, created)
		}
	}
	if _, err := h.TurnEvents(ctx, "turn_nope"); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("unknown turn: %v", err)
	}
	if _, err := h.SessionEvents(ctx, "session_nope", "", 10); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("unknown session: %v", err)
	}
}

// turnOf is the turn an event belongs to.
func turnOf(t *testing.T, e demiurge.Event) string {
	if e.AggregateType == demiurge.AggTurn {
		return e.AggregateID
	}
	var p struct {
		TurnID      string `json:"turn_id"`
		OwnerTurnID string `json:"owner_turn_id"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.TurnID != "" {
		return p.TurnID
	}
	return p.OwnerTurnID
}
