package delivery_test

import (
	"context"
	"errors"
	"testing"

	"github.com/demiurge/demiurge"
)

// Send calls the route before anything is written and returns the record
// for the caller's next write: once written, with the caller's events, the
// rows are the ones Enqueue and Dispatch leave, and the route saw the same
// outbound.
func TestSendDeliversFirstAndLeavesTheRecordToTheCaller(t *testing.T) {
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
	id, status, record, err := f.rt.Send(ctx, f.intent("hello", demiurge.HistoryPersist))
	if err != nil || id == "" || status != demiurge.DeliverySent {
		t.Fatalf("Send=%q %q, %v", id, status, err)
	}
	if got := f.db.Commits() - before; got != 0 {
		t.Fatalf("Send committed %d write transactions, want none", got)
	}
	if len(route.got) != 2 || route.got[1].Text != route.got[0].Text || route.got[1].DeliveryID != id {
		t.Fatalf("route saw %+v", route.got)
	}
	if _, err := f.db.AppendBatches(ctx, append([]demiurge.EventBatch{b}, record...)); err != nil {
		t.Fatal(err)
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
}

// A route failure is recorded as Dispatch records it: a permanent one
// fails the delivery and annotates its history message.
func TestSendRecordsARouteFailure(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.router.Bind(f.sessionID, &recordingRoute{fail: demiurge.Errorf(demiurge.EINVALID, "chat is gone")})
	in := f.intent("hello", demiurge.HistoryPersist)
	in.FailureHistoryText = "hello (not delivered)"
	id, status, record, err := f.rt.Send(ctx, in)
	if err != nil || status != demiurge.DeliveryFailed {
		t.Fatalf("Send=%q, %v", status, err)
	}
	if _, err := f.db.AppendBatches(ctx, record); err != nil {
		t.Fatal(err)
	}
	d := f.outbox(t, id)
	if d.Status != demiurge.DeliveryFailed || d.LastError != "chat is gone" {
		t.Fatalf("outbox %+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkFailed {
		t.Fatalf("work item %+v", w)
	}
	msgs := f.transcript(t)
	last := msgs[len(msgs)-1]
	if last.Content.Text != "hello" || last.Content.Metadata["delivery_status"] != demiurge.DeliveryFailed ||
		last.Content.Metadata["delivery_failure_text"] != "hello (not delivered)" {
		t.Fatalf("history message %+v", last.Content)
	}
}

// A Send whose caller is already cancelled sends nothing: its record is
// the queued intent, which the delivery loop takes up later.
func TestSendCancelledBeforeDispatchRecordsTheIntentOnly(t *testing.T) {
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id, status, record, err := f.rt.Send(ctx, f.intent("hello", demiurge.HistoryPersist))
	wantCode(t, err, demiurge.ECANCELED)
	if id == "" || status != "" || len(record) != 1 || len(route.got) != 0 {
		t.Fatalf("Send=%q %q, %d batches, route saw %d", id, status, len(record), len(route.got))
	}
	if _, err := f.db.AppendBatches(context.Background(), record); err != nil {
		t.Fatal(err)
	}
	if d := f.outbox(t, id); d.Status != demiurge.DeliveryQueued {
		t.Fatalf("outbox %+v", d)
	}
	if w := f.work(t, id); w.Status != demiurge.WorkQueued {
		t.Fatalf("work item %+v", w)
	}
}

// A send cancelled while the route holds it is recorded failed "delivery
// cancelled" and reported as ECANCELED.
func TestSendCancelledDuringTheRouteCall(t *testing.T) {
	f := newFixture(t)
	route := &recordingRoute{block: true, entered: make(chan struct{})}
	f.router.Bind(f.sessionID, route)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-route.entered
		cancel()
	}()
	id, status, record, err := f.rt.Send(ctx, f.intent("hello", demiurge.HistoryTransient))
	if !errors.Is(err, context.Canceled) && demiurge.ErrorCode(err) != demiurge.ECANCELED {
		t.Fatalf("err %v, want ECANCELED", err)
	}
	if status != demiurge.DeliveryFailed {
		t.Fatalf("status %q", status)
	}
	if _, err := f.db.AppendBatches(context.Background(), record); err != nil {
		t.Fatal(err)
	}
	if d := f.outbox(t, id); d.Status != demiurge.DeliveryFailed || d.LastError != "delivery cancelled" {
		t.Fatalf("outbox %+v", d)
	}
}

// An invalid intent is neither sent nor recorded.
func TestSendInvalidRecordsNothing(t *testing.T) {
	f := newFixture(t)
	route := &recordingRoute{}
	f.router.Bind(f.sessionID, route)
	id, _, record, err := f.rt.Send(context.Background(), f.intent("hello", "sometimes"))
	wantCode(t, err, demiurge.EINVALID)
	if id != "" || record != nil || len(route.got) != 0 {
		t.Fatalf("invalid Send: id %q, record %v, route saw %d", id, record, len(route.got))
	}
}

// sessionMessage is a visible user message of the fixture's turn.
func sessionMessage(f *fixture, text string) demiurge.MessageInput {
	return demiurge.MessageInput{SessionID: f.sessionID, TurnID: f.turnID, Role: demiurge.RoleUser, Text: text, Visible: true, ModelVisible: true}
}
