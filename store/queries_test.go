package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// bigRows is past the 10,000-row mark the query contracts are stated for.
const bigRows = 10_050

// TestWindowsPastTenThousandRows fills every listed projection past 10,000
// rows and checks that each bounded query returns the newest rows, in the
// documented order, and no more than its limit.
func TestWindowsPastTenThousandRows(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 50,000 rows")
	}
	t.Parallel()
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	createSession(t, db, "session_big", map[string]any{"owner": operatorOwner()})

	const batch = 1000
	var evs []demiurge.Event
	flush := func() {
		if len(evs) > 0 {
			mustAppend(t, db, "", evs...)
			evs = evs[:0]
			clock.Advance(time.Second) // many rows share a timestamp: ordering must not rely on it
		}
	}
	for i := range bigRows {
		role := demiurge.RoleUser
		if i%2 == 1 {
			role = demiurge.RoleAssistant
		}
		kind := "message"
		if i%10 == 9 {
			kind = "note"
		}
		n := itoa(i)
		evs = append(evs,
			ev(demiurge.AggMessage, "msg_"+n, demiurge.EvMessagePersisted, map[string]any{
				"session_id": "session_big", "role": role,
				"content": map[string]any{"text": "message " + n, "kind": kind, "model_visible": i%7 != 0}}),
			ev(demiurge.AggSession, "session_"+n, demiurge.EvSessionCreated, map[string]any{"core_id": "assistant", "owner": operatorOwner()}),
			ev(demiurge.AggTurn, "turn_"+n, demiurge.EvTurnStarted, map[string]any{"session_id": "session_big"}),
			ev(demiurge.AggTask, "task_"+n, demiurge.EvTaskSubmitted, map[string]any{"kind": "terminal.exec", "owner_session_id": "session_big"}),
			ev(demiurge.AggDelivery, "delivery_"+n, demiurge.EvDeliveryQueued, map[string]any{"owner_turn_id": "turn_" + n, "channel": "cli"}),
		)
		if len(evs) >= batch {
			flush()
		}
	}
	flush()
	last := itoa(bigRows - 1)

	// Messages: the newest window, in transcript order.
	msgs, err := db.RecentMessages(ctx, "session_big", demiurge.MessageFilter{Limit: 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 30 || msgs[29].ID != "msg_"+last || msgs[0].ID != "msg_"+itoa(bigRows-30) {
		t.Fatalf("window: %d messages, first %s last %s", len(msgs), msgs[0].ID, msgs[len(msgs)-1].ID)
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Seq <= msgs[i-1].Seq {
			t.Fatalf("window not in runtime_seq order at %d", i)
		}
	}
	older, _ := db.RecentMessages(ctx, "session_big", demiurge.MessageFilter{Limit: 30, BeforeSeq: msgs[0].Seq})
	if len(older) != 30 || older[29].ID != "msg_"+itoa(bigRows-31) {
		t.Fatalf("page before cursor ends at %s", older[len(older)-1].ID)
	}
	if all, _ := db.RecentMessages(ctx, "session_big", demiurge.MessageFilter{Limit: 1 << 20}); len(all) != demiurge.MaxMessageLimit {
		t.Fatalf("oversized limit returned %d, want %d", len(all), demiurge.MaxMessageLimit)
	}
	if def, _ := db.RecentMessages(ctx, "session_big", demiurge.MessageFilter{}); len(def) != demiurge.DefaultMessageLimit {
		t.Fatalf("default window %d, want %d", len(def), demiurge.DefaultMessageLimit)
	}
	filtered, _ := db.RecentMessages(ctx, "session_big", demiurge.MessageFilter{Limit: 40, ModelVisibleOnly: true, Kind: "message", Roles: []string{"user"}})
	if len(filtered) != 40 {
		t.Fatalf("filtered window %d", len(filtered))
	}
	for _, m := range filtered {
		if m.Role != "user" || m.Content.Kind != "message" || !m.Content.ModelVisible {
			t.Fatalf("filtered window holds %+v", m)
		}
	}
	if s, _ := db.Session(ctx, "session_big"); s.MessageCount != bigRows || s.Preview != "message "+itoa(bigRows-2) || s.Title != "message 0" {
		t.Fatalf("derived fields: count %d preview %q title %q", s.MessageCount, s.Preview, s.Title)
	}

	// Sessions: newest first; session_big was touched by messages until the
	// last batch but was created first, so rowid breaks the timestamp tie.
	sessions, err := db.ListSessions(ctx, demiurge.SessionFilter{Limit: 5})
	if err != nil || len(sessions) != 5 {
		t.Fatalf("ListSessions = %d, %v", len(sessions), err)
	}
	if sessions[0].ID != "session_"+last {
		t.Fatalf("newest session %s, want session_%s", sessions[0].ID, last)
	}
	scoped, _ := db.ListSessions(ctx, demiurge.SessionFilter{CoreID: "assistant", Scope: ptr(demiurge.OperatorScope("")), Limit: 3})
	if len(scoped) != 3 || scoped[0].ID != "session_"+last {
		t.Fatalf("scoped newest %v", scoped)
	}
	if def, _ := db.ListSessions(ctx, demiurge.SessionFilter{}); len(def) != demiurge.DefaultSessionLimit {
		t.Fatalf("default sessions %d", len(def))
	}

	turns, err := db.ListTurns(ctx, "session_big", 4)
	if err != nil || len(turns) != 4 || turns[0].ID != "turn_"+last || turns[1].ID != "turn_"+itoa(bigRows-2) {
		t.Fatalf("ListTurns = %v, %v", ids(turns, func(x demiurge.Turn) string { return x.ID }), err)
	}
	tasks, err := db.ListTasks(ctx, demiurge.TaskFilter{OwnerSessionID: "session_big", Kind: "terminal.exec", Status: "queued", Limit: 3})
	if err != nil || len(tasks) != 3 || tasks[0].ID != "task_"+last {
		t.Fatalf("ListTasks = %v, %v", ids(tasks, func(x demiurge.Task) string { return x.ID }), err)
	}
	if all, _ := db.ListTasks(ctx, demiurge.TaskFilter{Limit: 1 << 20}); len(all) != demiurge.MaxTaskLimit || all[0].ID != "task_"+last {
		t.Fatalf("ListTasks unfiltered: %d rows", len(all))
	}
	dels, err := db.Deliveries(ctx, demiurge.DeliveryFilter{Status: "queued", Limit: 2})
	if err != nil || len(dels) != 2 || dels[0].ID != "delivery_"+last {
		t.Fatalf("Deliveries = %v, %v", ids(dels, func(x demiurge.Delivery) string { return x.ID }), err)
	}
	byTurn, _ := db.Deliveries(ctx, demiurge.DeliveryFilter{TurnID: "turn_" + last})
	if len(byTurn) != 1 || byTurn[0].ID != "delivery_"+last {
		t.Fatalf("Deliveries(turn) = %v", byTurn)
	}

	// Events: cursor before limit, ascending.
	lastSeq, _ := db.LastSeq(ctx, demiurge.AggDelivery, "delivery_"+last)
	tail, err := db.Events(ctx, demiurge.EventFilter{AfterSeq: lastSeq - 3, Limit: 100})
	if err != nil || len(tail) != 3 || tail[2].Seq != lastSeq {
		t.Fatalf("Events tail = %d events, %v", len(tail), err)
	}
	if page, _ := db.Events(ctx, demiurge.EventFilter{Type: demiurge.EvTurnStarted, AfterSeq: 0, Limit: 1 << 20}); len(page) != demiurge.MaxEventLimit {
		t.Fatalf("Events page %d, want %d", len(page), demiurge.MaxEventLimit)
	}

	// Generic query, newest by seq.
	q, err := db.Query(ctx, store.Query{Table: "messages", Where: map[string]any{"session_id": "session_big"}, OrderBy: "runtime_seq", Descending: true, Limit: 1})
	if err != nil || len(q) != 1 || q[0]["message_id"] != "msg_"+last {
		t.Fatalf("Query newest message = %v, %v", q, err)
	}
}

func ptr[T any](v T) *T { return &v }

func ids[T any](xs []T, id func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

func TestQueryValidation(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	tests := []struct {
		q    store.Query
		want string
	}{
		{store.Query{Table: "hosts"}, "unsupported runtime table: hosts"},
		{store.Query{Table: "sqlite_schema"}, "unsupported runtime table: sqlite_schema"},
		{store.Query{Table: "sessions", Where: map[string]any{"session_id; DROP TABLE sessions": 1}}, `invalid column name: "session_id; DROP TABLE sessions"`},
		{store.Query{Table: "sessions", Where: map[string]any{"nope": 1}}, "unknown column nope in table sessions"},
		{store.Query{Table: "sessions", OrderBy: "core_id"}, "unsupported order_by: core_id"},
		{store.Query{Table: "sessions", OrderBy: "seq"}, "order_by column seq is not in table sessions"},
		{store.Query{Table: "sessions", Descending: true}, "descending requires order_by"},
	}
	for _, tt := range tests {
		_, err := db.Query(ctx, tt.q)
		wantCode(t, err, demiurge.EINVALID)
		if err.Error() != tt.want {
			t.Fatalf("Query(%+v) error %q, want %q", tt.q, err.Error(), tt.want)
		}
	}
}

func TestQueryDecodesJSONColumns(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	for i := range 5 {
		mustAppend(t, db, "", ev(demiurge.AggArtifact, "artifact_"+itoa(i), demiurge.EvArtifactStored, map[string]any{
			"kind": "file", "uri": "u" + itoa(i), "metadata": map[string]any{"i": i}, "owner_turn_id": nil}))
	}
	if _, err := rawDB(t, db.OpenedWith()).Exec(`UPDATE artifacts SET metadata_json = '{broken' WHERE artifact_id = 'artifact_2'`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, store.Query{Table: "artifacts", OrderBy: "created_at", Descending: true, Limit: 10})
	if err != nil || len(rows) != 5 {
		t.Fatalf("Query = %v, %v", rows, err)
	}
	if rows[0]["artifact_id"] != "artifact_4" {
		t.Fatalf("descending order: first %v", rows[0]["artifact_id"])
	}
	for _, r := range rows {
		if _, ok := r["metadata_json"]; ok {
			t.Fatalf("raw metadata_json returned: %v", r)
		}
		if r["owner_turn_id"] != nil {
			t.Fatalf("owner_turn_id %v, want nil", r["owner_turn_id"])
		}
	}
	if m := rows[2]["metadata"].(map[string]any); m["_corrupt_json"] != "{broken" {
		t.Fatalf("corrupt metadata decoded as %v", m)
	}
	if m := rows[0]["metadata"].(map[string]any); m["i"] != float64(4) {
		t.Fatalf("metadata %v", m)
	}
	nulls, err := db.Query(ctx, store.Query{Table: "artifacts", Where: map[string]any{"owner_turn_id": nil, "kind": "file"}, Limit: 2, Offset: 1, OrderBy: "created_at"})
	if err != nil || len(nulls) != 2 || nulls[0]["artifact_id"] != "artifact_1" {
		t.Fatalf("IS NULL + offset query = %v, %v", nulls, err)
	}
}
