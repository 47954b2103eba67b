package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func conversationScope(sessionID string) demiurge.PrincipalScope {
	return demiurge.PrincipalScope{PrincipalID: "principal:conversation:telegram:1", Authority: demiurge.AuthorityConversation,
		Channel: "telegram", ConversationKey: "telegram:dm:1", SessionID: sessionID, AllowedSessionIDs: []string{sessionID}}
}

// deniedAudits returns the owner-lookup audit events after seq.
func deniedAudits(tb testing.TB, db *store.DB, after int64) []demiurge.Event {
	tb.Helper()
	evs, err := db.Events(context.Background(), demiurge.EventFilter{Type: demiurge.EvPrincipalOwnerLookupDenied, AfterSeq: after})
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// headSeq returns the newest seq of the whole log.
func headSeq(tb testing.TB, db *store.DB) int64 {
	tb.Helper()
	rows, err := db.Query(context.Background(), store.Query{Table: "runtime_events", OrderBy: "seq", Descending: true, Limit: 1})
	if err != nil {
		tb.Fatal(err)
	}
	if len(rows) == 0 {
		return 0
	}
	return rows[0]["seq"].(int64)
}

func TestSessionOwned(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	createSession(t, db, "session_mine", map[string]any{"owner": map[string]any{
		"kind": "conversation", "principal_id": "principal:conversation:telegram:1", "channel": "telegram", "conversation_key": "telegram:dm:1"}})
	createSession(t, db, "session_other", map[string]any{"owner": map[string]any{
		"kind": "conversation", "principal_id": "principal:conversation:telegram:2"}})
	createSession(t, db, "session_legacy", nil)
	createSession(t, db, "session_ownerless", map[string]any{"owner": operatorOwner()})
	if _, err := rawDB(t, db.OpenedWith()).Exec(`DELETE FROM session_owners WHERE session_id = 'session_ownerless'`); err != nil {
		t.Fatal(err)
	}

	mine := conversationScope("session_mine")
	op := demiurge.OperatorScope("session_mine")
	if s, err := db.SessionOwned(ctx, mine, "session_mine"); err != nil || s.ID != "session_mine" {
		t.Fatalf("own session: %v, %v", s.ID, err)
	}
	if s, err := db.SessionOwned(ctx, op, "session_other"); err != nil || s.ID != "session_other" {
		t.Fatalf("operator on a conversation session: %v, %v", s.ID, err)
	}

	long := strings.Repeat("x", 300)
	tests := []struct {
		name   string
		scope  demiurge.PrincipalScope
		id     string
		reason string
	}{
		{"missing", mine, "session_nope", demiurge.DeniedNotFound},
		{"foreign", mine, "session_other", demiurge.DeniedNotAuthorized},
		{"operator legacy", op, "session_legacy", demiurge.DeniedLegacyOwner},
		{"operator ownerless", op, "session_ownerless", demiurge.DeniedMissingOwner},
		{"empty allowed set", demiurge.PrincipalScope{PrincipalID: "p", Authority: demiurge.AuthoritySystem}, "session_mine", demiurge.DeniedNotAuthorized},
		{"forged operator", demiurge.PrincipalScope{PrincipalID: "principal:x", Authority: demiurge.AuthorityOperator}, "session_mine", demiurge.DeniedNotAuthorized},
		{"long id", mine, long, demiurge.DeniedNotFound},
	}
	var missingErr string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := headSeq(t, db)
			_, err := db.SessionOwned(ctx, tt.scope, tt.id)
			wantCode(t, err, demiurge.ENOTFOUND)
			if want := "session not found: " + tt.id; err.Error() != want {
				t.Fatalf("error %q, want %q", err.Error(), want)
			}
			if tt.name == "missing" {
				missingErr = strings.Replace(err.Error(), tt.id, "ID", 1)
			} else if tt.name == "foreign" && strings.Replace(err.Error(), tt.id, "ID", 1) != missingErr {
				t.Fatalf("foreign error %q differs from missing error %q", err.Error(), missingErr)
			}
			audits := deniedAudits(t, db, before)
			if len(audits) != 1 {
				t.Fatalf("%d audit events, want 1", len(audits))
			}
			p := payloadOf(t, audits[0])
			wantID := tt.id
			if len(wantID) > 256 {
				wantID = wantID[:256]
			}
			if p["reason"] != tt.reason || p["lookup_id"] != wantID || p["principal_id"] != tt.scope.PrincipalID {
				t.Fatalf("audit payload %v, want reason %s", p, tt.reason)
			}
		})
	}
}

func TestListSessionsScope(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	createSession(t, db, "session_a", map[string]any{"owner": operatorOwner()})
	createSession(t, db, "session_b", map[string]any{"core_id": "evolver", "owner": map[string]any{"kind": "conversation", "principal_id": "p2"}})
	createSession(t, db, "session_legacy", nil)
	got := func(f demiurge.SessionFilter) []string {
		t.Helper()
		ss, err := db.ListSessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return ids(ss, func(s demiurge.Session) string { return s.ID })
	}
	if g := got(demiurge.SessionFilter{}); strings.Join(g, ",") != "session_legacy,session_b,session_a" {
		t.Fatalf("unscoped %v", g)
	}
	if g := got(demiurge.SessionFilter{Scope: ptr(demiurge.OperatorScope(""))}); strings.Join(g, ",") != "session_b,session_a" {
		t.Fatalf("operator %v (legacy must be hidden)", g)
	}
	if g := got(demiurge.SessionFilter{Scope: ptr(conversationScope("session_b"))}); strings.Join(g, ",") != "session_b" {
		t.Fatalf("conversation %v", g)
	}
	if g := got(demiurge.SessionFilter{Scope: &demiurge.PrincipalScope{PrincipalID: "p", Authority: "system"}}); len(g) != 0 {
		t.Fatalf("empty allowed set sees %v", g)
	}
	if g := got(demiurge.SessionFilter{CoreID: "evolver"}); strings.Join(g, ",") != "session_b" {
		t.Fatalf("core filter %v", g)
	}
	_, err := db.Session(ctx, "session_zzz")
	wantCode(t, err, demiurge.ENOTFOUND)
	if err.Error() != "session not found: session_zzz" {
		t.Fatalf("error %q", err)
	}
}
