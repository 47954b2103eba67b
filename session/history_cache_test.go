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
		last, err = w.AppendMessage(ctx, session.MessageInput{SessionID: s.ID, Role: demiurge.RoleUser, Text: fmt.Sprintf("m%d", i), Visible: true, ModelVisible: true})
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
