package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
)

// The real RuntimeStore satisfies the port the session runtime declares.
var _ session.Store = (*store.DB)(nil)

func newRuntime(tb testing.TB) (*session.Runtime, *store.DB) {
	tb.Helper()
	db := demiurgetest.MustOpenDB(tb)
	// Every reading advances the clock by a second, so events written one
	// after the other have distinct, ordered times.
	clock := demiurgetest.NewTickingClock(time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC), time.Second)
	return session.NewRuntime(db, session.Options{Now: clock.Now}), db
}

// events returns the events of one type (at most 1000).
func events(tb testing.TB, db *store.DB, typ, aggID string) []demiurge.Event {
	tb.Helper()
	evs, err := db.Events(context.Background(), demiurge.EventFilter{Type: typ, AggregateID: aggID, Limit: demiurge.MaxEventLimit})
	if err != nil {
		tb.Fatalf("events %s: %v", typ, err)
	}
	return evs
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := demiurge.ErrorCode(err); got != code {
		tb.Fatalf("error code=%q (%v), want %q", got, err, code)
	}
}
