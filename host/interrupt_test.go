package host_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// CancelTurn of a running interactive turn (Ctrl-C in the terminal UI)
// ends it cancelled, its running command and card included, and the
// session goes on with the next turn.
func TestCancelTurnThenSessionContinues(t *testing.T) {
	h := openScripted(t,
		demiurgetest.Call("terminal", map[string]any{"command": "sleep 60"}),
		demiurgetest.Reply("after the interrupt"),
	)
	ctx := context.Background()
	sid := demiurge.NewID("session")
	f, err := h.Subscribe(ctx, sid, host.FeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var mu sync.Mutex
	var turnID string
	var end turn.ToolCallEvent
	cancelled := ""
	start := time.Now()
	res, err := h.Run(ctx, turn.Request{
		Text: "run something slow", NewSession: true, NewSessionID: sid,
		Approver:   demiurgetest.NewApprover(effect.DecisionAllowOnce),
		OnAdmitted: func(_, id string) { mu.Lock(); turnID = id; mu.Unlock() },
		OnToolCall: func(ev turn.ToolCallEvent) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Phase {
			case turn.ToolCallRunning:
				// The interrupt comes from another goroutine, as a key press would.
				id := turnID
				done := make(chan string)
				go func() { done <- h.CancelTurn(id, demiurge.OperatorScope("")) }()
				cancelled = <-done
			case turn.ToolCallEnded:
				end = ev
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the cancelled turn took %s", took)
	}
	if cancelled != string(demiurge.TurnCancelled) || res.Outcome != turn.OutcomeCancelled || res.Error == nil {
		t.Fatalf("cancel answered %q; turn %s %+v", cancelled, res.Outcome, res.Error)
	}
	if end.CardStatus() != demiurge.EffectCancelled {
		t.Fatalf("the card ended %s", end.CardStatus())
	}
	if got := h.CancelTurn(res.TurnID, demiurge.OperatorScope("")); got != "not_found" {
		t.Fatalf("cancelling an ended turn: %q", got)
	}

	next, err := h.Run(ctx, turn.Request{Text: "and now?", SessionID: sid})
	if err != nil || next.Outcome != turn.OutcomeCompleted || next.Text != "after the interrupt" {
		t.Fatalf("next turn: %v %+v", err, next)
	}
	turns, err := h.ListTurns(ctx, "", sid, 10)
	if err != nil || len(turns) != 2 || turns[0].Status != demiurge.TurnCompleted || turns[1].Status != demiurge.TurnCancelled {
		t.Fatalf("turns %v %+v", err, turns)
	}
	items := collectUntil(t, f, func(items []host.FeedItem) bool {
		n := 0
		for _, it := range items {
			if it.Event.Type == demiurge.EvTurnCompleted {
				n++
			}
		}
		return n == 1
	})
	if !hasType(items, demiurge.EvTurnCancelled) {
		t.Fatalf("the feed has no cancelled turn: %s", types(items))
	}
}
