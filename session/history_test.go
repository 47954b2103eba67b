package session_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/session"
)

// History starts after the compaction cutoff: the cutoff message and what
// precedes it are replaced by the summary, messages persisted later are
// replayed, and clearing the cutoff replays the whole window again.
func TestHistoryAfterCompactionCutoff(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	say := func(role, text string) demiurge.Message {
		t.Helper()
		m, err := rt.AppendMessage(ctx, session.MessageInput{SessionID: s.ID, Role: role, Text: text, Visible: true, ModelVisible: true})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	texts := func(limit int) []string {
		t.Helper()
		h, err := rt.History(ctx, s.ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(h))
		for i, m := range h {
			out[i] = m.Content.Text
		}
		return out
	}
	equal := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("history %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("history %q, want %q", got, want)
			}
		}
	}
	// compact persists the summary and moves the cutoff in one batch, as a
	// compaction does.
	compact := func(until string) {
		t.Helper()
		sumID := demiurge.NewID("msg")
		_, err := db.Append(ctx, []demiurge.Event{
			{AggregateType: demiurge.AggMessage, AggregateID: sumID, Type: demiurge.EvMessagePersisted, Payload: payloadJSON(t, map[string]any{
				"session_id": s.ID, "role": demiurge.RoleSystem, "visibility": "hidden",
				"content": map[string]any{"text": "summary", "kind": "compaction_summary", "model_visible": true}})},
			{AggregateType: demiurge.AggSession, AggregateID: s.ID, Type: demiurge.EvSessionUpdated, Payload: payloadJSON(t, map[string]any{
				"compaction_summary_id": sumID, "compacted_until_message_id": until})},
		}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
	}

	say(demiurge.RoleUser, "u1")
	say(demiurge.RoleAssistant, "a1")
	cut := say(demiurge.RoleUser, "u2")
	say(demiurge.RoleAssistant, "a2")
	say(demiurge.RoleUser, "u3")
	equal(texts(0), "u1", "a1", "u2", "a2", "u3")

	compact(cut.ID)
	got, err := db.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CompactedUntilSeq != cut.Seq || got.CompactedUntilMessageID != cut.ID || got.CompactionSummaryID == "" {
		t.Fatalf("session cutoff %q seq %d summary %q, want %s seq %d", got.CompactedUntilMessageID, got.CompactedUntilSeq, got.CompactionSummaryID, cut.ID, cut.Seq)
	}
	equal(texts(0), "a2", "u3")
	say(demiurge.RoleAssistant, "a3")
	equal(texts(0), "a2", "u3", "a3")
	equal(texts(2), "u3", "a3") // the window is still the newest, inside the cutoff

	// Transcript is the operator's full view: the cutoff does not hide
	// anything there.
	all, err := rt.Transcript(ctx, s.ID, 0)
	if err != nil || len(all) != 7 {
		t.Fatalf("transcript %d messages (%v), want 7 (six turns and the summary)", len(all), err)
	}

	last := say(demiurge.RoleUser, "u4")
	compact(last.ID)
	equal(texts(0))

	compact("") // clears the cutoff
	equal(texts(0), "u1", "a1", "u2", "a2", "u3", "a3", "u4")
}
