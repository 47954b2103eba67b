package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// newClock is the store tests' manual clock, at 2026-07-04T01:00:00Z.
func newClock() *demiurgetest.Clock {
	return demiurgetest.NewClock(time.Date(2026, 7, 4, 1, 0, 0, 0, time.UTC))
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
