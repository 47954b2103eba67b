package session_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
)

// The real RuntimeStore satisfies the port the session runtime declares.
var _ session.Store = (*store.DB)(nil)

// MustOpenDB opens a real runtime store in a temporary directory and closes
// it when the test ends.
func MustOpenDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "runtime.sqlite3"), store.Options{})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return db
}

// clock is a manual clock: every reading advances it by one second, so
// events written one after the other have distinct, ordered times.
type clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newRuntime(tb testing.TB) (*session.Runtime, *store.DB) {
	tb.Helper()
	db := MustOpenDB(tb)
	return session.NewRuntime(db, session.Options{Now: newClock().Now}), db
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
