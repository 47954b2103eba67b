package delivery_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
)

// Send is Enqueue and Dispatch in two write transactions, the caller's
// events riding with the first: the rows it leaves are the ones Enqueue and
// Dispatch leave, and the route sees the same outbound.
func TestSendIsEnqueueAndDispatchInTwoTransactions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)

	want, err := f.rt.Enqueue(ctx, f.intent("hello", demiurge.HistoryPersist))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := f.rt.Dispatch(ctx, want); err != nil || s != demiurge.DeliverySent {
		t.Fatalf("Dispatch=%q, %v", s, err)
	}

	b, _, err := f.sessions.Message(sessionMessage(f, "before the answer"))
	if err != nil {
		t.Fatal(err)
	}
	before := f.db.Commits()
	id, status, err := f.rt.Send(ctx, f.intent("hello", demiurge.HistoryPersist), []demiurge.EventBatch{b})
	if err != nil || id == "" || status != demiurge.DeliverySent {
		t.Fatalf("Send=%q %q, %v", id, status, err)
	}
	if got := f.db.Commits() - before; got != 2 {
		t.Fatalf("Send committed %d write transactions, want 2", got)
	}

	sent, ref := f.outbox(t, id), f.outbox(t, want)
	if sent.Status != ref.Status || sent.Attempts != ref.Attempts || sent.SentAt.IsZero() || sent.Payload["history_text"] != ref.Payload["history_text"] {
		t.Fatalf("outbox %+v, want as %+v", sent, ref)
	}
	w, rw := f.work(t, id), f.work(t, want)
	if w.Status != rw.Status || w.Attempts != rw.Attempts || w.Kind != rw.Kind {
		t.Fatalf("work item %+v, want as %+v", w, rw)
	}
	msgs := f.transcript(t)
	if len(msgs) != 3 || msgs[1].Content.Text != "before the answer" || msgs[2].Content.Text != "hello" {
		t.Fatalf("transcript %+v", msgs)
	}
	if len(route.got) != 2 || route.got[1].Text != route.got[0].Text || route.got[1].DeliveryID != id {
		t.Fatalf("route saw %+v", route.got)
	}
}

// A Send that cannot be recorded writes nothing, first included.
func TestSendInvalidWritesNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	b, _, err := f.sessions.Message(sessionMessage(f, "kept for later"))
	if err != nil {
		t.Fatal(err)
	}
	in := f.intent("hello", "sometimes")
	before := f.db.Commits()
	id, _, err := f.rt.Send(ctx, in, []demiurge.EventBatch{b})
	wantCode(t, err, demiurge.EINVALID)
	if id != "" || f.db.Commits() != before {
		t.Fatalf("invalid Send: id %q, %d commits", id, f.db.Commits()-before)
	}
}

// sessionMessage is a visible user message of the fixture's turn.
func sessionMessage(f *fixture, text string) demiurge.MessageInput {
	return demiurge.MessageInput{SessionID: f.sessionID, TurnID: f.turnID, Role: demiurge.RoleUser, Text: text, Visible: true, ModelVisible: true}
}
