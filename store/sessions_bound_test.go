package store_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// BoundSession reads the session a conversation is bound to in one query,
// and says no both when nothing is bound and when the binding names a row
// that is gone, which SessionBinding still reports.
func TestBoundSession(t *testing.T) {
	ctx := context.Background()
	path := demiurgetest.TestDatabase(t)
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok, err := db.BoundSession(ctx, "assistant", "cli", "cli:k"); ok || err != nil {
		t.Fatalf("no binding: ok=%v, %v", ok, err)
	}
	mustAppend(t, db, "", ev(demiurge.AggSession, "session_bound", demiurge.EvSessionCreated, map[string]any{
		"core_id": "assistant", "channel": "cli", "conversation_key": "cli:k"}))
	s, ok, err := db.BoundSession(ctx, "assistant", "cli", "cli:k")
	if err != nil || !ok || s.ID != "session_bound" || s.CoreID != "assistant" {
		t.Fatalf("bound: %+v, ok=%v, %v", s, ok, err)
	}
	if _, ok, err := db.BoundSession(ctx, "assistant", "telegram", "cli:k"); ok || err != nil {
		t.Fatalf("another channel: ok=%v, %v", ok, err)
	}
	if _, err := rawDB(t, path).Exec(`DELETE FROM sessions WHERE session_id = 'session_bound'`); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.BoundSession(ctx, "assistant", "cli", "cli:k"); ok || err != nil {
		t.Fatalf("binding to a gone row: ok=%v, %v", ok, err)
	}
	if id, ok, err := db.SessionBinding(ctx, "assistant", "cli", "cli:k"); !ok || err != nil || id != "session_bound" {
		t.Fatalf("SessionBinding of the gone row: %q, %v, %v", id, ok, err)
	}
}
