package session_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/session"
)

// TestHistoryWindowFollowsAppendsAndEdits reads the history repeatedly while
// messages are appended by this runtime and by another one on the same store
// (another Host process), and after an edit: every read equals a fresh read.
func TestHistoryWindowFollowsAppendsAndEdits(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	other := session.NewRuntime(db, session.Options{})
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(limit int) []demiurge.Message {
		t.Helper()
		got, err := rt.History(ctx, s.ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := session.NewRuntime(db, session.Options{}).History(ctx, s.ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(fresh) {
			t.Fatalf("cached window has %d messages, a fresh read %d", len(got), len(fresh))
		}
		for i := range got {
			if got[i].ID != fresh[i].ID || got[i].Content.Text != fresh[i].Content.Text {
				t.Fatalf("message %d: cached %q, fresh %q", i, got[i].Content.Text, fresh[i].Content.Text)
			}
		}
		return got
	}
	var last demiurge.Message
	for i := range 30 {
		w := rt
		if i%3 == 0 {
			w = other
		}
		last, err = w.AppendMessage(ctx, demiurge.MessageInput{SessionID: s.ID, Role: demiurge.RoleUser, Text: fmt.Sprintf("m%d", i), Visible: true, ModelVisible: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := check(10); len(got) != min(i+1, 10) || got[len(got)-1].Content.Text != fmt.Sprintf("m%d", i) {
			t.Fatalf("after m%d the window ends with %q (%d messages)", i, got[len(got)-1].Content.Text, len(got))
		}
	}
	// An edit of a message already in the window is seen.
	if _, err := db.Append(ctx, []demiurge.Event{{AggregateType: demiurge.AggMessage, AggregateID: last.ID, Type: demiurge.EvMessageUpdated,
		Payload: payloadJSON(t, map[string]any{"content": map[string]any{"text": "edited", "kind": "message", "model_visible": true}})}}, "", nil); err != nil {
		t.Fatal(err)
	}
	if got := check(10); got[len(got)-1].Content.Text != "edited" {
		t.Fatalf("edit not seen: %q", got[len(got)-1].Content.Text)
	}
	// Callers may modify what they get without touching the window.
	got := check(10)
	got[0].Content.Text = "scribbled"
	check(10)
}

// TestHistoryWindowFollowsACompaction moves the compaction cutoff forward
// while a window is cached: every read still equals a fresh read, and the
// summary the compaction wrote is the session's summary.
func TestHistoryWindowFollowsACompaction(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []demiurge.Message
	appendN := func(n int) {
		t.Helper()
		for range n {
			m, err := rt.AppendMessage(ctx, demiurge.MessageInput{SessionID: s.ID, Role: demiurge.RoleUser, Text: fmt.Sprintf("m%d", len(msgs)), Visible: true, ModelVisible: true})
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, m)
		}
	}
	texts := func(ms []demiurge.Message) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.Content.Text
		}
		return out
	}
	// One cached runtime per limit: a window is kept for one limit.
	cached := map[int]*session.Runtime{8: rt, 20: session.NewRuntime(db, session.Options{})}
	check := func(limit int) {
		t.Helper()
		got, err := cached[limit].History(ctx, s.ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := session.NewRuntime(db, session.Options{}).History(ctx, s.ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(texts(got)) != fmt.Sprint(texts(fresh)) {
			t.Fatalf("limit %d: cached window %v, a fresh read %v", limit, texts(got), texts(fresh))
		}
	}
	appendN(12)
	check(8)
	check(20)
	for round, until := range []int{3, 9, 14} {
		appendN(2)
		b, summary, err := rt.Compaction(demiurge.CompactionInput{SessionID: s.ID, TurnID: demiurge.NewID("compact"),
			Text: fmt.Sprintf("summary %d", round), UntilMessageID: msgs[until].ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendBatches(ctx, []demiurge.EventBatch{b}); err != nil {
			t.Fatal(err)
		}
		check(8)
		check(20)
		sess, err := rt.Lookup(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sess.CompactionSummaryID != summary.ID {
			t.Fatalf("round %d: session names summary %q, want %q", round, sess.CompactionSummaryID, summary.ID)
		}
		text, err := rt.Summary(ctx, sess)
		if err != nil || text != fmt.Sprintf("summary %d", round) {
			t.Fatalf("round %d: Summary = %q, %v", round, text, err)
		}
		fresh, err := session.NewRuntime(db, session.Options{}).Summary(ctx, sess)
		if err != nil || fresh != text {
			t.Fatalf("round %d: a fresh Summary = %q, %v; want %q", round, fresh, err, text)
		}
	}
}
