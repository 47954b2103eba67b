package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// testClock is an adjustable clock for Options.Now.
type testClock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func newClock() *testClock {
	return &testClock{now: time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// MustOpenDB opens a fresh runtime database in a temporary directory and
// closes it when the test ends.
func MustOpenDB(tb testing.TB, opts ...store.Options) *store.DB {
	tb.Helper()
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return MustOpenPath(tb, filepath.Join(tb.TempDir(), "runtime", "runtime.sqlite3"), o)
}

// MustOpenPath opens the database at path and closes it when the test ends.
func MustOpenPath(tb testing.TB, path string, o store.Options) *store.DB {
	tb.Helper()
	if o.ProcessAlive == nil {
		o.ProcessAlive = process.Alive
	}
	db, err := store.Open(context.Background(), path, o)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() { MustCloseDB(tb, db) })
	return db
}

// MustCloseDB closes db; closing twice is harmless for the cleanup path.
func MustCloseDB(tb testing.TB, db *store.DB) {
	tb.Helper()
	if err := db.Close(); err != nil {
		tb.Fatalf("Close: %v", err)
	}
}

// mustAppend appends events and fails the test on error.
func mustAppend(tb testing.TB, db *store.DB, key string, evs ...demiurge.Event) []demiurge.Event {
	tb.Helper()
	out, err := db.Append(context.Background(), evs, key, nil)
	if err != nil {
		tb.Fatalf("Append(%s): %v", evs[0].Type, err)
	}
	return out
}

// ev is an event whose payload is p encoded as the store keeps it (sorted
// keys, no HTML escaping): the shapes earlier writers stored, and keys no
// payload struct has, reach the projections as they would from a database.
func ev(agg, id, typ string, p map[string]any) demiurge.Event {
	var body []byte
	if p != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p); err != nil {
			panic(err)
		}
		body = bytes.TrimRight(buf.Bytes(), "\n")
	}
	return demiurge.Event{AggregateType: agg, AggregateID: id, Type: typ, Payload: body}
}

// payloadOf decodes the payload of e as a map, the way a generic reader
// sees it.
func payloadOf(tb testing.TB, e demiurge.Event) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := e.Decode(&m); err != nil {
		tb.Fatalf("payload of %s: %v", e.Type, err)
	}
	return m
}

// createSession appends session.created with an owner of the given scope.
func createSession(tb testing.TB, db *store.DB, id string, p map[string]any) {
	tb.Helper()
	if p == nil {
		p = map[string]any{}
	}
	if p["core_id"] == nil {
		p["core_id"] = "assistant"
	}
	mustAppend(tb, db, "", ev(demiurge.AggSession, id, demiurge.EvSessionCreated, p))
}

func operatorOwner() map[string]any {
	return map[string]any{"kind": demiurge.AuthorityOperator, "principal_id": demiurge.OperatorPrincipalID}
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := demiurge.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (err %v), want %q", got, err, code)
	}
}
