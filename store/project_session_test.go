package store_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// row returns the only row of table matching where.
func row(tb testing.TB, db *store.DB, table string, where map[string]any) map[string]any {
	tb.Helper()
	rows, err := db.Query(context.Background(), store.Query{Table: table, Where: where})
	if err != nil {
		tb.Fatalf("Query(%s): %v", table, err)
	}
	if len(rows) != 1 {
		tb.Fatalf("Query(%s, %v) = %d rows, want 1", table, where, len(rows))
	}
	return rows[0]
}

func count(tb testing.TB, db *store.DB, table string, where map[string]any) int {
	tb.Helper()
	rows, err := db.Query(context.Background(), store.Query{Table: table, Where: where, Limit: 1000})
	if err != nil {
		tb.Fatalf("Query(%s): %v", table, err)
	}
	return len(rows)
}

func TestProjectSessionCreated(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	createSession(t, db, "session_a", map[string]any{
		"channel": "telegram", "conversation_key": "telegram:dm:1", "workspace": "/w", "provider": "fake",
		"model": "m1", "core_revision": "rev1", "metadata": map[string]any{"k": "v"}, "title": "Named",
		"bootstrap_context": "boot", "bootstrap_context_initialized": true,
		"target": map[string]any{"extra": "x"},
		"owner": map[string]any{"kind": demiurge.AuthorityConversation, "principal_id": "principal:conversation:telegram:1",
			"channel": "telegram", "conversation_key": "telegram:dm:1"},
	})
	s, err := db.Session(ctx, "session_a")
	if err != nil {
		t.Fatal(err)
	}
	want := demiurge.Session{ID: "session_a", CoreID: "assistant", Status: "active", Channel: "telegram",
		ConversationKey: "telegram:dm:1", Workspace: "/w", Provider: "fake", Model: "m1", Title: "Named",
		CoreRevision: "rev1", BootstrapContext: "boot", BootstrapInitialized: true,
		Owner: demiurge.SessionOwner{Kind: "conversation", PrincipalID: "principal:conversation:telegram:1",
			Channel: "telegram", ConversationKey: "telegram:dm:1"},
		CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
	if s.Metadata["k"] != "v" {
		t.Fatalf("metadata %v", s.Metadata)
	}
	s.Metadata = nil
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Session =\n%+v\nwant\n%+v", s, want)
	}
	if target := row(t, db, "sessions", map[string]any{"session_id": "session_a"})["target"].(map[string]any); target["extra"] != "x" {
		t.Fatalf("target %v lacks extra key", target)
	}
	id, ok, err := db.SessionBinding(ctx, "assistant", "telegram", "telegram:dm:1")
	if err != nil || !ok || id != "session_a" {
		t.Fatalf("SessionBinding = %q %v %v", id, ok, err)
	}

	// A second session for the same conversation does not steal the
	// binding, and re-creating session_a cannot change its owner.
	createSession(t, db, "session_b", map[string]any{"channel": "telegram", "conversation_key": "telegram:dm:1",
		"owner": map[string]any{"kind": "conversation", "principal_id": "principal:conversation:telegram:2"}})
	if id, _, _ := db.SessionBinding(ctx, "assistant", "telegram", "telegram:dm:1"); id != "session_a" {
		t.Fatalf("binding moved to %s; first must win", id)
	}
	createSession(t, db, "session_a", map[string]any{"owner": map[string]any{"kind": "operator", "principal_id": demiurge.OperatorPrincipalID}})
	if s, _ := db.Session(ctx, "session_a"); s.Owner.PrincipalID != "principal:conversation:telegram:1" {
		t.Fatalf("owner changed to %+v", s.Owner)
	}

	// No owner → legacy_local.
	createSession(t, db, "session_legacy", nil)
	if s, _ := db.Session(ctx, "session_legacy"); s.Owner.Kind != demiurge.OwnerLegacyLocal || s.Owner.PrincipalID != "principal:legacy_local:session_legacy" {
		t.Fatalf("legacy owner = %+v", s.Owner)
	}
}

func TestProjectSessionUpdatedAndResumed(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	createSession(t, db, "session_u", map[string]any{"channel": "cli", "model": "m1", "workspace": "/w",
		"owner": operatorOwner()})
	created := clock.Now()

	clock.Advance(time.Minute)
	mustAppend(t, db, "", ev(demiurge.AggSession, "session_u", demiurge.EvSessionUpdated, map[string]any{
		"model": "m2", "conversation_key": "cli:local:1", "title": "Renamed", "workspace": nil}))
	s, _ := db.Session(ctx, "session_u")
	if s.Model != "m2" || s.Workspace != "/w" || s.Title != "Renamed" || s.ConversationKey != "cli:local:1" {
		t.Fatalf("after update: %+v", s)
	}
	if !s.UpdatedAt.Equal(clock.Now()) || !s.CreatedAt.Equal(created) {
		t.Fatalf("updated_at %v created_at %v", s.UpdatedAt, s.CreatedAt)
	}
	if id, ok, _ := db.SessionBinding(ctx, "assistant", "cli", "cli:local:1"); !ok || id != "session_u" {
		t.Fatalf("update did not bind the new conversation key: %q %v", id, ok)
	}

	clock.Advance(time.Minute)
	mustAppend(t, db, "", ev(demiurge.AggSession, "session_u", demiurge.EvSessionResumed, map[string]any{"core_revision": "rev2"}))
	s2, _ := db.Session(ctx, "session_u")
	if s2.CoreRevision != "rev2" || !s2.UpdatedAt.Equal(s.UpdatedAt) {
		t.Fatalf("resume: revision %q updated_at %v (want unchanged %v)", s2.CoreRevision, s2.UpdatedAt, s.UpdatedAt)
	}
	// Updating a missing session is a no-op, not an error.
	mustAppend(t, db, "", ev(demiurge.AggSession, "session_missing", demiurge.EvSessionUpdated, map[string]any{"model": "x"}))
}

func TestProjectSessionBindingRebound(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	createSession(t, db, "session_old", map[string]any{"channel": "slack", "conversation_key": "slack:dm:1", "owner": operatorOwner()})
	createSession(t, db, "session_new", map[string]any{"owner": operatorOwner()})
	mustAppend(t, db, "", ev(demiurge.AggSession, "session_new", demiurge.EvSessionBindingRebound, map[string]any{
		"core_id": "assistant", "channel": "slack", "conversation_key": "slack:dm:1", "core_revision": "rev9"}))
	if id, _, _ := db.SessionBinding(ctx, "assistant", "slack", "slack:dm:1"); id != "session_new" {
		t.Fatalf("binding points at %s, want session_new", id)
	}
	s, _ := db.Session(ctx, "session_new")
	if s.Channel != "slack" || s.ConversationKey != "slack:dm:1" || s.CoreRevision != "rev9" {
		t.Fatalf("rebound session %+v", s)
	}
	_, err := db.Append(ctx, []demiurge.Event{ev(demiurge.AggSession, "session_new", demiurge.EvSessionBindingRebound, map[string]any{"channel": "slack"})}, "", nil)
	wantCode(t, err, demiurge.EINVALID)
}

func TestProjectSessionBindingConflict(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	for _, id := range []string{"session_w", "session_l1", "session_l2"} {
		createSession(t, db, id, map[string]any{"channel": "x", "conversation_key": "x:" + id, "owner": operatorOwner()})
	}
	mustAppend(t, db, "", ev(demiurge.AggMessage, "msg_1", demiurge.EvMessagePersisted, map[string]any{
		"session_id": "session_l2", "role": "user", "content": map[string]any{"text": "hi"}}))
	for _, loser := range []string{"session_l1", "session_l2"} {
		mustAppend(t, db, "", ev(demiurge.AggSession, "session_w", demiurge.EvSessionBindingConflict,
			map[string]any{"winner": "session_w", "loser": loser}))
	}
	if _, err := db.Session(ctx, "session_l1"); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("empty loser still exists: %v", err)
	}
	if count(t, db, "session_owners", map[string]any{"session_id": "session_l1"}) != 0 ||
		count(t, db, "session_bindings", map[string]any{"session_id": "session_l1"}) != 0 {
		t.Fatal("empty loser left owner or binding rows")
	}
	if _, err := db.Session(ctx, "session_l2"); err != nil {
		t.Fatalf("loser with messages was deleted: %v", err)
	}
	if _, err := db.Session(ctx, "session_w"); err != nil {
		t.Fatalf("winner: %v", err)
	}
}

func TestProjectMessageDerivedFields(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	createSession(t, db, "session_m", map[string]any{"owner": operatorOwner()})
	msg := func(id, role, text string, extra map[string]any) demiurge.Event {
		content := map[string]any{"text": text}
		p := map[string]any{"session_id": "session_m", "role": role, "turn_id": "turn_1", "content": content}
		for k, v := range extra {
			if k == "kind" || k == "model_visible" {
				content[k] = v
			} else {
				p[k] = v
			}
		}
		return ev(demiurge.AggMessage, id, demiurge.EvMessagePersisted, p)
	}
	check := func(title, preview string, n int) {
		t.Helper()
		s, err := db.Session(ctx, "session_m")
		if err != nil {
			t.Fatal(err)
		}
		if s.Title != title || s.Preview != preview || s.MessageCount != n {
			t.Fatalf("title %q preview %q count %d; want %q %q %d", s.Title, s.Preview, s.MessageCount, title, preview, n)
		}
	}

	clock.Advance(time.Second)
	mustAppend(t, db, "", msg("msg_a", "assistant", "  hello from the assistant  ", nil))
	check("", "hello from the assistant", 1)
	long := strings.Repeat("é", 200)
	mustAppend(t, db, "", msg("msg_b", "user", "first\nuser line\r\n"+long, nil))
	firstPreview := "first user line " + strings.Repeat("é", 120-len([]rune("first user line ")))
	s, _ := db.Session(ctx, "session_m")
	check(s.Title, firstPreview, 2)
	if !strings.HasPrefix(firstPreview, s.Title) {
		t.Fatalf("title %q is not a prefix of the preview %q", s.Title, firstPreview)
	}
	if got := len([]rune(s.Title)); got != 80 {
		t.Fatalf("title has %d runes, want 80", got)
	}
	title := s.Title
	if !s.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("updated_at %v, want %v", s.UpdatedAt, clock.Now())
	}

	// Hidden, blank and non-message kinds count but do not become the preview;
	// a later user message does not replace the title.
	mustAppend(t, db, "",
		msg("msg_c", "user", "hidden text", map[string]any{"visibility": "hidden"}),
		msg("msg_d", "user", "   ", nil),
		msg("msg_e", "system", "summary", map[string]any{"kind": "compaction_summary"}),
		msg("msg_f", "user", "second user", map[string]any{"visible": false}),
	)
	check(title, firstPreview, 6)
	mustAppend(t, db, "", msg("msg_g", "user", "latest words", nil))
	check(title, "latest words", 7)

	// Re-persisting a message replaces it without counting twice.
	mustAppend(t, db, "", msg("msg_g", "user", "latest words, edited", nil))
	check(title, "latest words, edited", 7)
	rows, _ := db.RecentMessages(ctx, "session_m", demiurge.MessageFilter{Limit: 100})
	if len(rows) != 7 || rows[6].ID != "msg_g" || rows[6].Content.Text != "latest words, edited" {
		t.Fatalf("transcript after re-persist: %+v", rows)
	}
	if rows[2].Visible || rows[3].Content.Kind != "message" || rows[4].Content.Kind != "compaction_summary" || !rows[4].Content.ModelVisible {
		t.Fatalf("message fields: %+v", rows[2:5])
	}
}

func TestProjectMessageUpdated(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	createSession(t, db, "session_m", map[string]any{"owner": operatorOwner()})
	mustAppend(t, db, "", ev(demiurge.AggMessage, "msg_1", demiurge.EvMessagePersisted, map[string]any{
		"session_id": "session_m", "role": "assistant", "content": map[string]any{"text": "draft"}}))
	mustAppend(t, db, "", ev(demiurge.AggMessage, "msg_1", demiurge.EvMessageUpdated, map[string]any{
		"content":    map[string]any{"text": "final", "model_visible": false, "metadata": map[string]any{"edited": true}},
		"visibility": "hidden"}))
	m, _ := db.RecentMessages(ctx, "session_m", demiurge.MessageFilter{})
	if len(m) != 1 || m[0].Content.Text != "final" || m[0].Content.ModelVisible || m[0].Visible || m[0].Content.Metadata["edited"] != true {
		t.Fatalf("updated message %+v", m)
	}
}
