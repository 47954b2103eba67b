package session_test

import (
	"context"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
)

func cliRequest(core string) demiurge.SessionRequest {
	c := session.CLIConversationKey(core)
	return demiurge.SessionRequest{
		CoreID: c.CoreID, CoreRevision: "rev1", Channel: c.Channel, ConversationKey: c.Key,
		Scope: demiurge.OperatorScope(""), Workspace: "/w", Provider: "fake", Model: "m1",
	}
}

func TestResolveCreateThenResume(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)

	s, created, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("first resolve created=false, want true")
	}
	if got, want := demiurge.IDPrefix(s.ID), "session"; got != want {
		t.Fatalf("session id %q prefix=%q, want %q", s.ID, got, want)
	}
	if s.CoreID != "assistant" || s.Channel != "cli" || s.ConversationKey != "cli:operator:local" ||
		s.Workspace != "/w" || s.Provider != "fake" || s.Model != "m1" || s.CoreRevision != "rev1" {
		t.Fatalf("created session=%+v", s)
	}
	if got, want := s.Owner, demiurge.OperatorScope("").Owner(); got != want {
		t.Fatalf("owner=%+v, want %+v", got, want)
	}
	if id, ok, err := db.SessionBinding(ctx, "assistant", "cli", "cli:operator:local"); err != nil || !ok || id != s.ID {
		t.Fatalf("binding=%q,%v,%v, want %q", id, ok, err, s.ID)
	}

	req := cliRequest("assistant")
	req.Model, req.CoreRevision = "m2", "rev2"
	again, created, err := rt.Resolve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if created || again.ID != s.ID {
		t.Fatalf("second resolve=%s created=%v, want %s created=false", again.ID, created, s.ID)
	}
	if again.Model != "m2" || again.CoreRevision != "rev2" {
		t.Fatalf("resumed session model=%q rev=%q, want m2 rev2", again.Model, again.CoreRevision)
	}
	if !again.UpdatedAt.Equal(s.UpdatedAt) {
		t.Fatalf("resume touched updated_at: %v → %v", s.UpdatedAt, again.UpdatedAt)
	}
	if got := len(events(t, db, demiurge.EvSessionResumed, s.ID)); got != 1 {
		t.Fatalf("session.resumed events=%d, want 1", got)
	}
	if got := len(events(t, db, demiurge.EvSessionCreated, "")); got != 1 {
		t.Fatalf("session.created events=%d, want 1", got)
	}
}

func TestResolveBindingPerConversation(t *testing.T) {
	ctx := context.Background()
	rt, _ := newRuntime(t)
	a, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	b, created, err := rt.Resolve(ctx, cliRequest("evolver"))
	if err != nil {
		t.Fatal(err)
	}
	if !created || b.ID == a.ID {
		t.Fatalf("other core got session %s (created=%v), want a new one", b.ID, created)
	}
	scope, err := session.ConversationScope("telegram", "42", "telegram:dm:42", "")
	if err != nil {
		t.Fatal(err)
	}
	tg := demiurge.SessionRequest{CoreID: "assistant", Channel: "telegram", ConversationKey: "telegram:dm:42", Scope: scope}
	c, created, err := rt.Resolve(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	if !created || c.ID == a.ID || c.ID == b.ID {
		t.Fatalf("telegram conversation got %s (created=%v), want a new session", c.ID, created)
	}
	if got, want := c.Owner, scope.Owner(); got != want {
		t.Fatalf("conversation owner=%+v, want %+v", got, want)
	}
	again, _, err := rt.Resolve(ctx, tg)
	if err != nil || again.ID != c.ID {
		t.Fatalf("telegram again=%s (%v), want %s", again.ID, err, c.ID)
	}
	cli, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil || cli.ID != a.ID {
		t.Fatalf("cli again=%s (%v), want %s", cli.ID, err, a.ID)
	}
}

func TestResolveNewAndExplicitSession(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	first, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}

	req := cliRequest("assistant")
	req.New = true
	fresh, created, err := rt.Resolve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !created || fresh.ID == first.ID {
		t.Fatalf("new resolve=%s created=%v, want a fresh session", fresh.ID, created)
	}
	cont, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil || cont.ID != fresh.ID {
		t.Fatalf("after new, conversation continues %s (%v), want %s", cont.ID, err, fresh.ID)
	}
	if got := len(events(t, db, demiurge.EvSessionBindingRebound, fresh.ID)); got != 1 {
		t.Fatalf("rebound events for new session=%d, want 1", got)
	}

	req = cliRequest("assistant")
	req.SessionID = first.ID
	back, created, err := rt.Resolve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if created || back.ID != first.ID {
		t.Fatalf("explicit resume=%s created=%v, want %s", back.ID, created, first.ID)
	}
	cont, _, err = rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil || cont.ID != first.ID {
		t.Fatalf("after explicit resume, conversation continues %s (%v), want %s", cont.ID, err, first.ID)
	}

	// An explicit session without a conversation is resumed, not rebound.
	plain := demiurge.SessionRequest{CoreID: "assistant", SessionID: fresh.ID, Scope: demiurge.OperatorScope("")}
	got, _, err := rt.Resolve(ctx, plain)
	if err != nil || got.ID != fresh.ID {
		t.Fatalf("plain resume=%s (%v), want %s", got.ID, err, fresh.ID)
	}
	if id, _, _ := db.SessionBinding(ctx, "assistant", "cli", "cli:operator:local"); id != first.ID {
		t.Fatalf("plain resume moved the binding to %s", id)
	}

	// Another core's session cannot be resumed under this core.
	plain.CoreID = "evolver"
	_, _, err = rt.Resolve(ctx, plain)
	wantCode(t, err, demiurge.EINVALID)
}

func TestResolveMissingAndForeignAreIdentical(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	alice, _ := session.ConversationScope("telegram", "alice", "telegram:dm:alice", "")
	bob, _ := session.ConversationScope("telegram", "bob", "telegram:dm:bob", "")
	aliceSession, _, err := rt.Resolve(ctx, demiurge.SessionRequest{CoreID: "assistant", Channel: "telegram", ConversationKey: "telegram:dm:alice", Scope: alice})
	if err != nil {
		t.Fatal(err)
	}

	resume := func(scope demiurge.PrincipalScope, id string) error {
		_, _, err := rt.Resolve(ctx, demiurge.SessionRequest{CoreID: "assistant", Channel: "telegram", ConversationKey: scope.ConversationKey, SessionID: id, Scope: scope})
		return err
	}
	errForeign := resume(bob, aliceSession.ID)
	wantCode(t, errForeign, demiurge.ENOTFOUND)
	if got, want := errForeign.Error(), "session not found: "+aliceSession.ID; got != want {
		t.Fatalf("foreign error=%q, want %q", got, want)
	}
	missing := "session_00000000000000000000000000"
	errMissing := resume(bob, missing)
	wantCode(t, errMissing, demiurge.ENOTFOUND)
	if got, want := errMissing.Error(), "session not found: "+missing; got != want {
		t.Fatalf("missing error=%q, want %q", got, want)
	}
	if got := len(events(t, db, demiurge.EvPrincipalOwnerLookupDenied, "")); got < 2 {
		t.Fatalf("owner_lookup_denied audit events=%d, want ≥ 2", got)
	}

	// The owner resumes its own session by id; the operator may too.
	if err := resume(alice, aliceSession.ID); err != nil {
		t.Fatalf("owner resume: %v", err)
	}
	op := demiurge.SessionRequest{CoreID: "assistant", SessionID: aliceSession.ID, Scope: demiurge.OperatorScope("")}
	if _, _, err := rt.Resolve(ctx, op); err != nil {
		t.Fatalf("operator resume: %v", err)
	}

	// Get / List under the same rules.
	_, errGet := rt.Get(ctx, bob, aliceSession.ID)
	_, errGetMissing := rt.Get(ctx, bob, missing)
	if demiurge.ErrorCode(errGet) != demiurge.ENOTFOUND || errGet.Error() != "session not found: "+aliceSession.ID ||
		errGetMissing.Error() != "session not found: "+missing {
		t.Fatalf("Get foreign=%v missing=%v, want identical not-found", errGet, errGetMissing)
	}
	if s, err := rt.Get(ctx, session.ForSession(alice, aliceSession.ID), aliceSession.ID); err != nil || s.ID != aliceSession.ID {
		t.Fatalf("Get own=%s (%v)", s.ID, err)
	}
	list, err := rt.List(ctx, session.ForSession(bob, "session_other"), "assistant", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("bob lists %d sessions, want 0", len(list))
	}
	list, err = rt.List(ctx, demiurge.OperatorScope(""), "assistant", 10)
	if err != nil || len(list) != 1 || list[0].ID != aliceSession.ID {
		t.Fatalf("operator list=%v (%v), want [%s]", list, err, aliceSession.ID)
	}
}

func TestListNewestFirstAndBounded(t *testing.T) {
	ctx := context.Background()
	rt, _ := newRuntime(t)
	var ids []string
	for i := 0; i < 5; i++ {
		req := cliRequest("assistant")
		req.New = true
		s, _, err := rt.Resolve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	list, err := rt.List(ctx, demiurge.OperatorScope(""), "assistant", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("list len=%d, want 3", len(list))
	}
	for i, s := range list {
		if want := ids[len(ids)-1-i]; s.ID != want {
			t.Fatalf("list[%d]=%s, want %s (newest first)", i, s.ID, want)
		}
	}
	if list, err := rt.List(ctx, demiurge.OperatorScope(""), "other", 0); err != nil || len(list) != 0 {
		t.Fatalf("other core list=%v (%v), want empty", list, err)
	}
}

func TestOwnerIsImmutable(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	// A later session.created for the same id (a replay, a bug, a forged
	// event) must not change who owns the session.
	_, err = db.Append(ctx, []demiurge.Event{{
		AggregateType: demiurge.AggSession, AggregateID: s.ID, Type: demiurge.EvSessionCreated,
		Payload: payloadJSON(t, map[string]any{"core_id": "assistant", "owner": map[string]any{
			"kind": demiurge.AuthorityConversation, "principal_id": "principal:conversation:telegram:mallory",
			"channel": "telegram", "conversation_key": "telegram:dm:mallory",
		}}),
	}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Get(ctx, demiurge.OperatorScope(""), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := demiurge.OperatorScope("").Owner(); got.Owner != want {
		t.Fatalf("owner after second created=%+v, want %+v", got.Owner, want)
	}
	mallory, _ := session.ConversationScope("telegram", "mallory", "telegram:dm:mallory", "")
	_, _, err = rt.Resolve(ctx, demiurge.SessionRequest{CoreID: "assistant", SessionID: s.ID, Scope: mallory})
	wantCode(t, err, demiurge.ENOTFOUND)
}

// racyStore hides the binding from the first lookup, as if a concurrent
// creator bound the conversation between the lookup and the creation.
type racyStore struct {
	*store.DB
	once   sync.Once
	before func()
}

func (s *racyStore) SessionBinding(ctx context.Context, core, channel, key string) (string, bool, error) {
	hidden := false
	s.once.Do(func() { s.before(); hidden = true })
	if hidden {
		return "", false, nil
	}
	return s.DB.SessionBinding(ctx, core, channel, key)
}

func TestResolveBindingConflictReturnsWinner(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	other := session.NewRuntime(db, session.Options{})
	var winner demiurge.Session
	rs := &racyStore{DB: db, before: func() {
		var err error
		winner, _, err = other.Resolve(ctx, cliRequest("assistant"))
		if err != nil {
			t.Errorf("winner resolve: %v", err)
		}
	}}
	rt := session.NewRuntime(rs, session.Options{})
	got, created, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	if created || got.ID != winner.ID {
		t.Fatalf("loser resolve=%s created=%v, want winner %s", got.ID, created, winner.ID)
	}
	conflicts := events(t, db, demiurge.EvSessionBindingConflict, "")
	if len(conflicts) != 1 {
		t.Fatalf("binding_conflict events=%d, want 1", len(conflicts))
	}
	p := payloadOf(t, conflicts[0])
	loser, _ := p["loser"].(string)
	if p["winner"] != winner.ID || loser == "" || loser == winner.ID {
		t.Fatalf("conflict payload=%v", p)
	}
	if _, err := db.Session(ctx, loser); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("empty loser row still there: %v", err)
	}
}

func TestResolveConcurrentCreatorsAgree(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := session.NewRuntime(db, session.Options{})
			s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
			ids[i], errs[i] = s.ID, err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("resolver %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("resolver %d got %s, resolver 0 got %s: one conversation, two sessions", i, ids[i], ids[0])
		}
	}
	list, err := db.ListSessions(ctx, demiurge.SessionFilter{CoreID: "assistant"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("sessions left=%d, want 1 (losers deleted)", len(list))
	}
}

func TestResolveRejectsBadRequests(t *testing.T) {
	ctx := context.Background()
	rt, _ := newRuntime(t)
	base := cliRequest("assistant")
	tests := []struct {
		name string
		mod  func(*demiurge.SessionRequest)
	}{
		{"no core", func(r *demiurge.SessionRequest) { r.CoreID = "" }},
		{"channel without key", func(r *demiurge.SessionRequest) { r.ConversationKey = "" }},
		{"new and id", func(r *demiurge.SessionRequest) { r.New = true; r.SessionID = "session_x" }},
		{"no scope", func(r *demiurge.SessionRequest) { r.Scope = demiurge.PrincipalScope{} }},
		{"forged operator", func(r *demiurge.SessionRequest) { r.Scope.PrincipalID = "principal:conversation:x:y" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := base
			tt.mod(&req)
			_, _, err := rt.Resolve(ctx, req)
			wantCode(t, err, demiurge.EINVALID)
		})
	}
}
