package store_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

func persist(id, sessionID, text string) demiurge.Event {
	return ev(demiurge.AggMessage, id, demiurge.EvMessagePersisted, map[string]any{
		"session_id": sessionID, "role": "user", "content": map[string]any{"text": text}})
}

func cutoff(sessionID string, p map[string]any) demiurge.Event {
	return ev(demiurge.AggSession, sessionID, demiurge.EvSessionUpdated, p)
}

// The projection fixes the Seq of the compaction cutoff message when the
// cutoff is set and refuses a cutoff the session's transcript does not hold.
func TestProjectCompactionCutoff(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	createSession(t, db, "session_c", map[string]any{"owner": operatorOwner()})
	createSession(t, db, "session_other", map[string]any{"owner": operatorOwner()})
	var seq = map[string]int64{}
	for _, id := range []string{"msg_1", "msg_2", "msg_3"} {
		seq[id] = mustAppend(t, db, "", persist(id, "session_c", id))[0].Seq
	}
	mustAppend(t, db, "", persist("msg_foreign", "session_other", "elsewhere"))

	session := func() demiurge.Session {
		t.Helper()
		s, err := db.Session(ctx, "session_c")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := session(); s.CompactedUntilSeq != 0 || s.CompactedUntilMessageID != "" {
		t.Fatalf("new session has a cutoff: %+v", s)
	}

	mustAppend(t, db, "", cutoff("session_c", map[string]any{"compaction_summary_id": "msg_sum", "compacted_until_message_id": "msg_2"}))
	s := session()
	if s.CompactedUntilMessageID != "msg_2" || s.CompactedUntilSeq != seq["msg_2"] || s.CompactionSummaryID != "msg_sum" {
		t.Fatalf("cutoff = %q seq %d summary %q, want msg_2 seq %d msg_sum", s.CompactedUntilMessageID, s.CompactedUntilSeq, s.CompactionSummaryID, seq["msg_2"])
	}
	// An update that does not name the cutoff keeps it, and a payload cannot
	// set the derived seq itself.
	mustAppend(t, db, "", cutoff("session_c", map[string]any{"model": "m2", "target": map[string]any{"compacted_until_seq": 1}}))
	if s := session(); s.CompactedUntilSeq != seq["msg_2"] || s.Model != "m2" {
		t.Fatalf("unrelated update changed the cutoff: %+v", s)
	}

	for name, msgID := range map[string]string{"unknown message": "msg_missing", "message of another session": "msg_foreign"} {
		_, err := db.Append(ctx, []demiurge.Event{cutoff("session_c", map[string]any{"compacted_until_message_id": msgID, "model": "m3"})}, "", nil)
		wantCode(t, err, demiurge.EINVALID)
		if want := "session session_c: compacted_until_message_id " + msgID + " is not a message of the session"; err.Error() != want {
			t.Fatalf("%s: error %q, want %q", name, err, want)
		}
		if s := session(); s.CompactedUntilMessageID != "msg_2" || s.CompactedUntilSeq != seq["msg_2"] || s.Model != "m2" {
			t.Fatalf("%s: a refused cutoff wrote %+v", name, s)
		}
	}

	// A summary message and the cutoff it sets can land in one batch; the
	// cutoff may also arrive in the target object.
	evs := mustAppend(t, db, "", persist("msg_4", "session_c", "four"),
		cutoff("session_c", map[string]any{"target": map[string]any{"compacted_until_message_id": "msg_4"}}))
	if s := session(); s.CompactedUntilMessageID != "msg_4" || s.CompactedUntilSeq != evs[0].Seq {
		t.Fatalf("same-batch cutoff = %q seq %d, want msg_4 seq %d", s.CompactedUntilMessageID, s.CompactedUntilSeq, evs[0].Seq)
	}

	// "" clears it.
	mustAppend(t, db, "", cutoff("session_c", map[string]any{"compacted_until_message_id": ""}))
	if s := session(); s.CompactedUntilSeq != 0 || s.CompactedUntilMessageID != "" {
		t.Fatalf("cleared cutoff still set: %+v", s)
	}
}

// AfterSeq and BeforeSeq bound a message window on both sides.
func TestRecentMessagesBetweenCursors(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	createSession(t, db, "session_w", map[string]any{"owner": operatorOwner()})
	var seqs []int64
	for i := range 8 {
		seqs = append(seqs, mustAppend(t, db, "", persist("msg_"+itoa(i), "session_w", itoa(i)))[0].Seq)
	}
	tests := []struct {
		name string
		f    demiurge.MessageFilter
		want []string
	}{
		{"after", demiurge.MessageFilter{AfterSeq: seqs[5]}, []string{"6", "7"}},
		{"after, newest window", demiurge.MessageFilter{AfterSeq: seqs[1], Limit: 3}, []string{"5", "6", "7"}},
		{"between", demiurge.MessageFilter{AfterSeq: seqs[1], BeforeSeq: seqs[4]}, []string{"2", "3"}},
		{"after the newest", demiurge.MessageFilter{AfterSeq: seqs[7]}, []string{}},
		{"no cursor", demiurge.MessageFilter{Limit: 2}, []string{"6", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := db.RecentMessages(ctx, "session_w", tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(ms, func(m demiurge.Message) string { return m.Content.Text })
			if len(got) != len(tt.want) {
				t.Fatalf("window %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("window %v, want %v", got, tt.want)
				}
			}
		})
	}
}
