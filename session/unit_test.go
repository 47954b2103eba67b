package session_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
)

// Resuming a session that already carries every fact of the request
// records nothing.
func TestResolveUnchangedWritesNothing(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	before := db.Commits()
	again, created, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil || created || again.ID != s.ID {
		t.Fatalf("resume: %s %v %v", again.ID, created, err)
	}
	if got := db.Commits() - before; got != 0 {
		t.Fatalf("an unchanged resume committed %d transactions", got)
	}
	if got := len(events(t, db, demiurge.EvSessionResumed, s.ID)); got != 0 {
		t.Fatalf("session.resumed events=%d, want 0", got)
	}
}

// FinishTurnWith writes the turn's pending events with its terminal event
// in one commit, and alone when the turn has already ended.
func TestFinishTurnWithWritesFirstOnce(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	start := demiurge.TurnStart{TurnID: demiurge.NewID("turn"), SessionID: s.ID, CoreID: "assistant"}
	if err := rt.StartTurn(ctx, start); err != nil {
		t.Fatal(err)
	}
	msg, _, err := rt.Message(demiurge.MessageInput{SessionID: s.ID, TurnID: start.TurnID, Role: demiurge.RoleUser, Text: "hi", Visible: true, ModelVisible: true})
	if err != nil {
		t.Fatal(err)
	}
	commit, commits := countingCommit(db)
	if err := rt.FinishTurnWith(ctx, start.TurnID, demiurge.TurnCompleted, nil, []demiurge.EventBatch{msg}, commit); err != nil {
		t.Fatal(err)
	}
	if *commits != 1 {
		t.Fatalf("%d commits, want 1", *commits)
	}
	if tr, err := db.Turn(ctx, start.TurnID); err != nil || tr.Status != demiurge.TurnCompleted {
		t.Fatalf("turn %+v, %v", tr, err)
	}
	// Already ended: the pending events are written alone, the answer is
	// FinishTurn's.
	late, _, err := rt.Message(demiurge.MessageInput{SessionID: s.ID, TurnID: start.TurnID, Role: demiurge.RoleTool, Text: "late", ModelVisible: true})
	if err != nil {
		t.Fatal(err)
	}
	err = rt.FinishTurnWith(ctx, start.TurnID, demiurge.TurnFailed, nil, []demiurge.EventBatch{late}, commit)
	wantCode(t, err, demiurge.ECONFLICT)
	if *commits != 2 {
		t.Fatalf("%d commits, want 2", *commits)
	}
	msgs, err := db.RecentMessages(ctx, s.ID, demiurge.MessageFilter{Limit: 10})
	if err != nil || len(msgs) != 2 || msgs[0].Content.Text != "hi" || msgs[1].Content.Text != "late" {
		t.Fatalf("transcript %+v, %v", msgs, err)
	}
}

// FinishStartedTurnWith ends a turn its caller started without reading it
// first, and still sees what was written to the turn since: a turn.lost
// appended under reconciliation's own key makes the unread attempt
// conflict, the turn stays lost, and the pending events are written once.
func TestFinishStartedTurnExpectsTheTurnUnchanged(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	commit, commits := countingCommit(db)
	start := func() demiurge.Event {
		t.Helper()
		b, err := rt.TurnStarted(demiurge.TurnStart{TurnID: demiurge.NewID("turn"), SessionID: s.ID, CoreID: "assistant"})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := db.AppendBatches(ctx, []demiurge.EventBatch{b})
		if err != nil {
			t.Fatal(err)
		}
		return stored[0][0]
	}
	pending := func(turnID, text string) []demiurge.EventBatch {
		t.Helper()
		b, _, err := rt.Message(demiurge.MessageInput{SessionID: s.ID, TurnID: turnID, Role: demiurge.RoleUser, Text: text, Visible: true, ModelVisible: true})
		if err != nil {
			t.Fatal(err)
		}
		return []demiurge.EventBatch{b}
	}

	done := start()
	if err := rt.FinishStartedTurnWith(ctx, done, s.ID, demiurge.TurnCompleted, nil, pending(done.AggregateID, "first"), commit); err != nil {
		t.Fatal(err)
	}
	if *commits != 1 {
		t.Fatalf("%d commits for an unchanged turn, want 1", *commits)
	}
	if tr, err := db.Turn(ctx, done.AggregateID); err != nil || tr.Status != demiurge.TurnCompleted {
		t.Fatalf("turn %+v, %v", tr, err)
	}

	lost := start()
	lostEv := demiurge.NewEvent(demiurge.AggTurn, lost.AggregateID, demiurge.TurnLostPayload{Status: demiurge.TurnLost})
	if _, err := db.Append(ctx, []demiurge.Event{lostEv}, "reconcile:turn:"+lost.AggregateID+":lost", nil); err != nil {
		t.Fatal(err)
	}
	*commits = 0
	err = rt.FinishStartedTurnWith(ctx, lost, s.ID, demiurge.TurnCompleted, nil, pending(lost.AggregateID, "second"), commit)
	wantCode(t, err, demiurge.ECONFLICT)
	if *commits != 2 {
		t.Fatalf("%d commits, want 2 (the refused attempt, then the pending events alone)", *commits)
	}
	if tr, err := db.Turn(ctx, lost.AggregateID); err != nil || tr.Status != demiurge.TurnLost {
		t.Fatalf("turn %+v, %v; want it still lost", tr, err)
	}
	msgs, err := db.RecentMessages(ctx, s.ID, demiurge.MessageFilter{Limit: 10})
	if err != nil || len(msgs) != 2 || msgs[0].Content.Text != "first" || msgs[1].Content.Text != "second" {
		t.Fatalf("transcript %+v, %v", msgs, err)
	}
}

// countingCommit commits batches through db and counts its calls.
func countingCommit(db *store.DB) (demiurge.CommitBatches, *int) {
	n := new(int)
	return func(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error) {
		*n++
		return db.AppendBatches(ctx, batches)
	}, n
}
