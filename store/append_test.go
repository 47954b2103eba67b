package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func TestAppendEmptyIsNoop(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	out, err := db.Append(context.Background(), nil, "k", nil)
	if err != nil || out != nil {
		t.Fatalf("Append(nil) = %v, %v; want nil, nil", out, err)
	}
	evs, err := db.Events(context.Background(), demiurge.EventFilter{})
	if err != nil || len(evs) != 0 {
		t.Fatalf("events after empty append = %d, %v", len(evs), err)
	}
}

func TestAppendFillsEnvelope(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	own := time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", 3600))
	out := mustAppend(t, db, "batch-1",
		ev("test", "a", "test.one", map[string]any{"b": 2, "a": 1}),
		demiurge.Event{AggregateType: "test", AggregateID: "a", Type: "test.two", EventID: "evt_custom", CreatedAt: own,
			Actor: map[string]any{"actor": "tester"}},
	)
	if len(out) != 2 {
		t.Fatalf("got %d events, want 2", len(out))
	}
	if demiurge.IDPrefix(out[0].EventID) != "evt" || out[1].EventID != "evt_custom" {
		t.Fatalf("event ids %q %q", out[0].EventID, out[1].EventID)
	}
	if !out[0].CreatedAt.Equal(clock.Now()) || !out[1].CreatedAt.Equal(own) {
		t.Fatalf("created_at %v %v", out[0].CreatedAt, out[1].CreatedAt)
	}
	if out[0].Seq <= 0 || out[1].Seq != out[0].Seq+1 {
		t.Fatalf("seqs %d %d, want consecutive", out[0].Seq, out[1].Seq)
	}
	for _, e := range out {
		if e.IdempotencyKey != "batch-1" {
			t.Fatalf("idempotency key %q, want batch-1", e.IdempotencyKey)
		}
	}

	// Stored JSON has sorted keys and no HTML escaping.
	mustAppend(t, db, "", demiurge.NewEvent("test", "b", htmlPayload{Z: "<b>&</b>", M: map[string]any{"y": 1, "x": 2}}))
	var raw string
	if err := rawDB(t, db.OpenedWith()).QueryRow(`SELECT payload_json FROM runtime_events WHERE type = 'test.html'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if want := `{"m":{"x":2,"y":1},"z":"<b>&</b>"}`; raw != want {
		t.Fatalf("payload_json = %s, want %s", raw, want)
	}
	got, err := db.Events(context.Background(), demiurge.EventFilter{AggregateType: "test", AggregateID: "a"})
	if err != nil || len(got) != 2 || got[1].Actor["actor"] != "tester" || payloadOf(t, got[0])["a"] != float64(1) {
		t.Fatalf("Events = %+v, %v", got, err)
	}
}

// htmlPayload is a payload of an event type without a projection.
type htmlPayload struct {
	M map[string]any `json:"m"`
	Z string         `json:"z"`
}

func (htmlPayload) Type() string { return "test.html" }

func TestAppendIdempotent(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	first := mustAppend(t, db, "once", ev("test", "a", "test.one", map[string]any{"v": "first"}),
		ev("test", "a", "test.two", nil))
	second, err := db.Append(ctx, []demiurge.Event{ev("test", "a", "test.other", map[string]any{"v": "second"})}, "once", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 2 {
		t.Fatalf("second append returned %d events, want the 2 stored ones", len(second))
	}
	for i := range first {
		if second[i].Seq != first[i].Seq || second[i].EventID != first[i].EventID || second[i].Type != first[i].Type {
			t.Fatalf("event %d: got %+v, want stored %+v", i, second[i], first[i])
		}
	}
	if p := payloadOf(t, second[0]); p["v"] != "first" {
		t.Fatalf("payload %v, want the stored one", p)
	}
	all, _ := db.Events(ctx, demiurge.EventFilter{})
	if len(all) != 2 {
		t.Fatalf("%d events stored, want 2", len(all))
	}
}

func TestAppendExpected(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	exp := &demiurge.Expected{AggregateType: "test", AggregateID: "a", LastSeq: 0}
	out, err := db.Append(ctx, []demiurge.Event{ev("test", "a", "test.one", nil)}, "", exp)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, "", ev("test", "other", "test.noise", nil)) // other aggregates do not matter

	_, err = db.Append(ctx, []demiurge.Event{ev("test", "a", "test.two", nil)}, "", exp)
	wantCode(t, err, demiurge.ECONFLICT)
	want := "runtime aggregate changed: expected 0, got " + itoa(int(out[0].Seq))
	if err.Error() != want {
		t.Fatalf("error %q, want %q", err.Error(), want)
	}
	exp.LastSeq = out[0].Seq
	if _, err := db.Append(ctx, []demiurge.Event{ev("test", "a", "test.two", nil)}, "", exp); err != nil {
		t.Fatalf("append with the right expectation: %v", err)
	}

	_, err = db.Append(ctx, []demiurge.Event{ev("test", "a", "test.three", nil)}, "", &demiurge.Expected{AggregateID: "a"})
	wantCode(t, err, demiurge.EINVALID)
	if err.Error() != "expected must include aggregate_type, aggregate_id, and last_seq" {
		t.Fatalf("error %q", err.Error())
	}
}

func TestAppendRejectsInvalidEvents(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	for _, e := range []demiurge.Event{
		{AggregateType: "t", AggregateID: "a"},
		{AggregateType: "t", Type: "x"},
		{AggregateID: "a", Type: "x"},
		demiurge.NewEvent("t", "a", htmlPayload{M: map[string]any{"f": func() {}}}),
		{AggregateType: "t", AggregateID: "a", Type: "x", Payload: []byte(`["not an object"]`)},
		{AggregateType: "t", AggregateID: "a", Type: "x", Payload: []byte(`{"broken"`)},
	} {
		_, err := db.Append(context.Background(), []demiurge.Event{ev("t", "ok", "t.ok", nil), e}, "", nil)
		wantCode(t, err, demiurge.EINVALID)
	}
	if all, _ := db.Events(context.Background(), demiurge.EventFilter{}); len(all) != 0 {
		t.Fatalf("%d events stored by failed batches, want 0", len(all))
	}
}

// A projection failure rolls back the whole batch, events included.
func TestAppendProjectionFailureRollsBack(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	_, err := db.Append(context.Background(), []demiurge.Event{
		ev("test", "a", "test.one", nil),
		ev(demiurge.AggSession, "session_bad", demiurge.EvSessionCreated, map[string]any{
			"core_id": "assistant", "owner": map[string]any{"kind": "conversation"}}),
	}, "k", nil)
	wantCode(t, err, demiurge.EINVALID)
	if all, _ := db.Events(context.Background(), demiurge.EventFilter{}); len(all) != 0 {
		t.Fatalf("%d events stored, want 0", len(all))
	}
	if _, err := db.Session(context.Background(), "session_bad"); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("session row exists after rollback: %v", err)
	}
}

func TestUnknownEventTypeStoredWithoutProjection(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	out := mustAppend(t, db, "", ev("custom", "c1", "custom.happened", map[string]any{"x": 1}))
	got, err := db.Events(context.Background(), demiurge.EventFilter{Type: "custom.happened"})
	if err != nil || len(got) != 1 || got[0].Seq != out[0].Seq {
		t.Fatalf("Events(type) = %v, %v", got, err)
	}
}

func TestEventsCursorAndFilters(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	for i := range 30 {
		agg := "a"
		if i%3 == 0 {
			agg = "b"
		}
		mustAppend(t, db, "", ev("test", agg, "test.e"+itoa(i%2), map[string]any{"i": i}))
	}
	var seen []int64
	var cursor int64
	for {
		page, err := db.Events(ctx, demiurge.EventFilter{AggregateType: "test", AggregateID: "a", AfterSeq: cursor, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 7 {
			t.Fatalf("page of %d, limit 7", len(page))
		}
		for _, e := range page {
			if e.AggregateID != "a" || e.Seq <= cursor {
				t.Fatalf("event %+v after cursor %d", e, cursor)
			}
			seen = append(seen, e.Seq)
			cursor = e.Seq
		}
	}
	if len(seen) != 20 {
		t.Fatalf("paged %d events of aggregate a, want 20", len(seen))
	}
	last, err := db.LastSeq(ctx, "test", "a")
	if err != nil || last != seen[len(seen)-1] {
		t.Fatalf("LastSeq = %d, %v; want %d", last, err, seen[len(seen)-1])
	}
	if n, _ := db.LastSeq(ctx, "test", "missing"); n != 0 {
		t.Fatalf("LastSeq(missing) = %d", n)
	}
	odd, _ := db.Events(ctx, demiurge.EventFilter{Type: "test.e1", Limit: 1000})
	if len(odd) != 15 {
		t.Fatalf("Events(type=test.e1) = %d, want 15", len(odd))
	}
}
