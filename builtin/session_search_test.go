package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/sessions"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
)

// The session runtime is what the Host wires as the searcher.
var _ sessions.Searcher = (*session.Runtime)(nil)

// sessionWorld is a real store with sessions of two principals.
type sessionWorld struct {
	rt               *session.Runtime
	alice, bob       demiurge.PrincipalScope // unbound scopes
	a1, a2, b1       string
	longText, hidden string
}

func newSessionWorld(t *testing.T) *sessionWorld {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "runtime.sqlite3"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	w := &sessionWorld{rt: session.NewRuntime(db, session.Options{})}
	if w.alice, err = session.ConversationScope("telegram", "alice", "chat-a", ""); err != nil {
		t.Fatal(err)
	}
	if w.bob, err = session.ConversationScope("telegram", "bob", "chat-b", ""); err != nil {
		t.Fatal(err)
	}
	newSession := func(scope demiurge.PrincipalScope) string {
		s, _, err := w.rt.Resolve(ctx, session.ResolveRequest{
			CoreID: "demo", Channel: scope.Channel, ConversationKey: scope.ConversationKey, Scope: scope, New: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	say := func(id, role, text string, visible, modelVisible bool) {
		if _, err := w.rt.AppendMessage(ctx, session.MessageInput{
			SessionID: id, Role: role, Text: text, Visible: visible, ModelVisible: modelVisible,
		}); err != nil {
			t.Fatal(err)
		}
	}
	w.a2 = newSession(w.alice)
	say(w.a2, "user", "older chat about deploy", true, true)
	w.a1 = newSession(w.alice)
	w.b1 = newSession(w.bob)
	w.longText = "deploy " + strings.Repeat("z", 900)
	w.hidden = "deploy internal note"
	say(w.a1, "user", "Please DEPLOY the app", true, true)
	say(w.a1, "assistant", "deploying now", true, true)
	say(w.a1, "system", w.hidden, false, false)
	say(w.a1, "assistant", w.longText, true, false)
	say(w.a1, "user", "thanks", true, true)
	say(w.b1, "user", "deploy bob's secret thing", true, true)
	return w
}

func (w *sessionWorld) env(t *testing.T, scope demiurge.PrincipalScope, sessionID string) *env {
	e := newEnv(t)
	e.deps.Sessions = w.rt
	e.tc.SessionID = sessionID
	e.tc.Scope = session.ForSession(scope, sessionID)
	return e
}

type searchResult struct {
	Count   int `json:"count"`
	Results []struct {
		SessionID string `json:"session_id"`
		MessageID string `json:"message_id"`
		Role      string `json:"role"`
		Content   string `json:"content"`
		CreatedAt string `json:"created_at"`
	} `json:"results"`
	Sessions []struct {
		SessionID    string `json:"session_id"`
		MessageCount int    `json:"message_count"`
	} `json:"sessions"`
}

func decodeSearch(t *testing.T, content string) searchResult {
	t.Helper()
	var r searchResult
	if err := json.Unmarshal([]byte(content), &r); err != nil {
		t.Fatalf("%v: %s", err, content)
	}
	return r
}

func TestSessionSearchOwnerIsolation(t *testing.T) {
	w := newSessionWorld(t)
	e := w.env(t, w.alice, w.a1)

	full := e.call("session_search", map[string]any{"query": "deploy", "limit": 50})
	wantOK(t, full)
	r := decodeSearch(t, full.Content)
	if strings.Contains(full.Content, "bob") || strings.Contains(full.Content, w.b1) {
		t.Fatalf("full-text search crossed owners: %s", full.Content)
	}
	if strings.Contains(full.Content, w.hidden) {
		t.Fatalf("internal message returned: %s", full.Content)
	}
	var texts []string
	for _, res := range r.Results {
		if res.SessionID != w.a1 {
			t.Fatalf("result from %s, want only the scope's session %s", res.SessionID, w.a1)
		}
		texts = append(texts, res.Content)
	}
	wantLong := strings.Repeat("z", 793)
	if len(texts) != 3 || texts[0] != "Please DEPLOY the app" || texts[1] != "deploying now" ||
		texts[2] != "deploy "+wantLong+"\n...[truncated 107 chars]" || r.Count != 3 {
		t.Fatalf("results %q", texts)
	}
	if demiurge.ParseTime(r.Results[0].CreatedAt).IsZero() || r.Results[0].MessageID == "" || r.Results[0].Role != "user" {
		t.Fatalf("result fields %+v", r.Results[0])
	}

	browse := decodeSearch(t, e.call("session_search", nil).Content)
	if len(browse.Sessions) != 1 || browse.Sessions[0].SessionID != w.a1 || browse.Sessions[0].MessageCount != 5 {
		t.Fatalf("browse %+v, want only %s", browse.Sessions, w.a1)
	}

	// An owned session other than the current one can be read by id.
	other := decodeSearch(t, e.call("session_search", map[string]any{"session_id": w.a2}).Content)
	if other.Count != 1 || other.Results[0].Content != "older chat about deploy" {
		t.Fatalf("owned session %+v", other)
	}

	// Someone else's session and a missing one give the same answer.
	foreign := e.call("session_search", map[string]any{"session_id": w.b1, "query": "deploy"})
	missing := e.call("session_search", map[string]any{"session_id": "session_missing", "query": "deploy"})
	wantRefused(t, foreign, "session not found: "+w.b1, "")
	wantRefused(t, missing, "session not found: session_missing", "")

	// Bob sees his own and nothing of Alice's.
	b := w.env(t, w.bob, w.b1)
	bobs := decodeSearch(t, b.call("session_search", map[string]any{"query": "deploy"}).Content)
	if bobs.Count != 1 || bobs.Results[0].SessionID != w.b1 {
		t.Fatalf("bob's search %+v", bobs)
	}
	wantRefused(t, b.call("session_search", map[string]any{"session_id": w.a1}), "session not found: "+w.a1, "")
}

func TestSessionSearchWindows(t *testing.T) {
	w := newSessionWorld(t)
	e := w.env(t, w.alice, w.a1)
	last := decodeSearch(t, e.call("session_search", map[string]any{"session_id": w.a1, "limit": 2}).Content)
	if last.Count != 2 || !strings.HasPrefix(last.Results[0].Content, "deploy zzz") || last.Results[1].Content != "thanks" {
		t.Fatalf("last two %+v", last.Results)
	}
	matches := decodeSearch(t, e.call("session_search", map[string]any{"session_id": w.a1, "query": "DEPLOYING"}).Content)
	if matches.Count != 1 || matches.Results[0].Content != "deploying now" {
		t.Fatalf("matches %+v", matches.Results)
	}
	limited := decodeSearch(t, e.call("session_search", map[string]any{"query": "deploy", "limit": 1}).Content)
	if limited.Count != 1 || limited.Results[0].Content != "Please DEPLOY the app" {
		t.Fatalf("limited %+v", limited.Results)
	}

	// The operator sees every owned session.
	op := w.env(t, demiurge.OperatorScope(""), "")
	op.tc.Scope = demiurge.OperatorScope("")
	all := decodeSearch(t, op.call("session_search", map[string]any{"query": "deploy", "limit": 50}).Content)
	if all.Count != 5 {
		t.Fatalf("operator search found %d, want 5", all.Count)
	}
}

func TestSessionSearchRefusals(t *testing.T) {
	w := newSessionWorld(t)
	e := w.env(t, w.alice, w.a1)
	e.tc.Grants = policy.NewGrants([]string{"fs.read", "session.*"}, nil)
	wantRefused(t, e.call("session_search", map[string]any{"query": "deploy"}), "capability denied: session.read for host", "capability")

	e.tc.Grants = policy.NewGrants([]string{"session.read"}, nil)
	e.tc.Scope = demiurge.PrincipalScope{}
	out := e.call("session_search", map[string]any{"query": "deploy"})
	if !out.IsError || out.ExecutionStarted || !strings.HasPrefix(out.Content, "session_search requires a principal scope") {
		t.Fatalf("no scope: %+v", out)
	}

	e.deps.Sessions = nil
	wantRefused(t, e.call("session_search", nil), "session_search is not available: no session runtime is configured", "")
}
