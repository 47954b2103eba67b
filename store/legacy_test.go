package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// legacyFixture is a database written before event payloads were typed
// (testdata/runtime-v0.md says how it was made).
const legacyFixture = "testdata/runtime-v0.sqlite3"

// openLegacy opens a copy of the fixture.
func openLegacy(t *testing.T) *store.DB {
	t.Helper()
	raw, err := os.ReadFile(legacyFixture)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return demiurgetest.MustOpenPath(t, path, store.Options{})
}

// allEvents reads every event of db in seq order.
func allEvents(t *testing.T, db *store.DB) []demiurge.Event {
	t.Helper()
	var out []demiurge.Event
	for {
		page, err := db.Events(context.Background(), demiurge.EventFilter{AfterSeq: int64(len(out)), Limit: demiurge.MaxEventLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
	}
}

// TestLegacyDatabaseReads opens the old database and reads what its runs
// left: sessions, transcripts, turns, tool calls, tasks and their logs,
// deliveries and the scheduler's instance.
func TestLegacyDatabaseReads(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "the fixture is an SQLite file of an earlier build")
	ctx := context.Background()
	db := openLegacy(t)

	sessions, err := db.ListSessions(ctx, demiurge.SessionFilter{})
	if err != nil || len(sessions) != 7 {
		t.Fatalf("ListSessions = %d sessions, %v; want 7", len(sessions), err)
	}
	s, err := db.Session(ctx, "session_01m8s0zva488t01gpze73mezf9")
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "write a note" || s.MessageCount != 9 || s.Workspace != "/tmp/fx/ws" || s.Model != "fake/demo" ||
		!s.BootstrapInitialized || s.Owner.Kind != demiurge.AuthorityOperator || s.ConversationKey != "cli:operator:local" {
		t.Fatalf("session %+v", s)
	}
	msgs, err := db.RecentMessages(ctx, s.ID, demiurge.MessageFilter{})
	if err != nil || len(msgs) != 9 {
		t.Fatalf("RecentMessages = %d, %v", len(msgs), err)
	}
	if m := msgs[0]; m.Role != demiurge.RoleUser || m.Content.Text != "write a note" || !m.Visible || !m.Content.ModelVisible || m.Content.Channel != "cli" {
		t.Fatalf("first message %+v", m)
	}

	tr, err := db.Turn(ctx, "turn_01m8s0zva5358j22g8jxg520zv")
	if err != nil || tr.Status != demiurge.TurnCompleted || tr.SessionID != s.ID {
		t.Fatalf("turn %+v, %v", tr, err)
	}
	calls, err := db.ToolCalls(ctx, tr.ID)
	if err != nil || len(calls) != 1 || calls[0].ToolName != "write_file" || calls[0].Status != "succeeded" ||
		calls[0].Args["path"] != "note.txt" || calls[0].Result["content"] != "wrote 13 chars to note.txt" {
		t.Fatalf("tool calls %+v, %v", calls, err)
	}
	denied, err := db.ToolCalls(ctx, "turn_01m8s0zvgsy0m85sdda3nhvh9t")
	if err != nil || len(denied) != 1 || denied[0].Status != "failed" || denied[0].Result["is_error"] != true {
		t.Fatalf("denied call %+v, %v", denied, err)
	}

	for id, want := range map[string]string{
		"task_01m8s0zvdnbazp5bc841tgj8nr":         demiurge.TaskSucceeded,
		"task_01m8s0zvm7v9hg7368gjw65z64":         demiurge.TaskSucceeded,
		"schedule_run_01m8s0zvq3mrb5h9xyg9m56yqk": demiurge.TaskSucceeded,
		"task_01m8s104hmfz2vprfd8833qvvt":         demiurge.TaskCancelled,
		"task_01m8s108vpsgd3txj7d4edktjn":         demiurge.TaskLost,
	} {
		tk, err := db.Task(ctx, id)
		if err != nil || tk.Status != want {
			t.Errorf("task %s: %+v, %v; want %s", id, tk, err, want)
		}
	}
	tk, _ := db.Task(ctx, "task_01m8s0zvdnbazp5bc841tgj8nr")
	if tk.Kind != "terminal.exec" || !strings.HasPrefix(tk.ResultRef, "artifact:") || tk.OwnerSessionID != s.ID || tk.Source["actor"] == nil {
		t.Fatalf("terminal task %+v", tk)
	}
	lost, _ := db.Task(ctx, "task_01m8s108vpsgd3txj7d4edktjn")
	if lost.Error["message"] != store.LostTaskSummary {
		t.Fatalf("lost task error %v", lost.Error)
	}
	logs, err := db.TaskLogTail(ctx, tk.ID, 10)
	if err != nil || len(logs) != 2 || logs[0].Text != "stdout: line-one" {
		t.Fatalf("task logs %+v, %v", logs, err)
	}
	if c, ok, err := db.TaskCompletion(ctx, tk.ID); err != nil || !ok || c.Status != demiurge.WorkAcknowledged {
		t.Fatalf("completion %+v %v %v", c, ok, err)
	}

	d, err := db.Delivery(ctx, "delivery_01m8s0zvannf8pzqnsphn7631s")
	if err != nil || d.Status != demiurge.DeliverySent || d.Attempts != 1 || d.Payload["history_text"] != "wrote it" {
		t.Fatalf("delivery %+v, %v", d, err)
	}
	inst := row(t, db, "scheduler_instances", map[string]any{"schedule_id": "daily"})
	if inst["claim_status"] != "completed" || inst["task_id"] != "schedule_run_01m8s0zvq3mrb5h9xyg9m56yqk" {
		t.Fatalf("scheduler instance %v", inst)
	}

	// The old database takes new events.
	yes := true
	mustAppend(t, db, "", demiurge.NewEvent(demiurge.AggMessage, "msg_after_upgrade", demiurge.MessagePersistedPayload{
		SessionID: s.ID, Role: demiurge.RoleUser, Visible: &yes, Content: &demiurge.MessageBody{Text: "after the upgrade"}}))
	if got, _ := db.Session(ctx, s.ID); got.MessageCount != 10 || got.Preview != "after the upgrade" {
		t.Fatalf("session after a new message %+v", got)
	}
}

// payloadTypes maps each event type to its payload struct.
func payloadTypes() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, p := range demiurge.EventPayloads() {
		out[p.Type()] = reflect.TypeOf(p)
	}
	return out
}

// TestLegacyPayloadsDecode decodes every stored payload into its struct and
// encodes it again: the struct keeps every key the old writers stored, so
// the JSON on disk is the same but for empty values a struct now omits.
func TestLegacyPayloadsDecode(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "the fixture is an SQLite file of an earlier build")
	db := openLegacy(t)
	types := payloadTypes()
	seen := map[string]bool{}
	for _, e := range allEvents(t, db) {
		rt, ok := types[e.Type]
		if !ok {
			t.Errorf("event %d: type %s has no payload struct", e.Seq, e.Type)
			continue
		}
		seen[e.Type] = true
		v := reflect.New(rt)
		if err := e.Decode(v.Interface()); err != nil {
			t.Errorf("event %d %s: %v", e.Seq, e.Type, err)
			continue
		}
		again := demiurge.NewEvent(e.AggregateType, e.AggregateID, v.Elem().Interface().(demiurge.EventPayload))
		var old, now map[string]any
		if err := json.Unmarshal(e.Payload, &old); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again.Payload, &now); err != nil {
			t.Fatal(err)
		}
		if diff := jsonDiff("", old, now); diff != "" {
			t.Errorf("event %d %s: re-encoded payload differs: %s\nold %s\nnew %s", e.Seq, e.Type, diff, e.Payload, again.Payload)
		}
	}
	if len(seen) < 30 {
		t.Fatalf("the fixture holds %d event types; expected at least 30", len(seen))
	}
}

// jsonDiff describes how now differs from old, "" when it does not: a key
// may be missing from now only where old held an empty value.
func jsonDiff(path string, old, now any) string {
	om, ok1 := old.(map[string]any)
	nm, ok2 := now.(map[string]any)
	if !ok1 || !ok2 {
		if !reflect.DeepEqual(old, now) {
			return fmt.Sprintf("%s: %v became %v", path, old, now)
		}
		return ""
	}
	for k, ov := range om {
		nv, ok := nm[k]
		if !ok {
			if !emptyJSON(ov) {
				return fmt.Sprintf("%s.%s: %v was dropped", path, k, ov)
			}
			continue
		}
		if d := jsonDiff(path+"."+k, ov, nv); d != "" {
			return d
		}
	}
	for k := range nm {
		if _, ok := om[k]; !ok {
			return fmt.Sprintf("%s.%s: added", path, k)
		}
	}
	return ""
}

func emptyJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case float64:
		return v == 0
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// TestLegacyEventsReplay applies the old database's events, in order, to a
// fresh database through the current projections: every projection row
// comes out as the old build wrote it.
func TestLegacyEventsReplay(t *testing.T) {
	old := openLegacy(t)
	fresh := demiurgetest.MustOpenDB(t)
	for _, e := range allEvents(t, old) {
		e.Seq, e.IdempotencyKey = 0, ""
		if _, err := fresh.Append(context.Background(), []demiurge.Event{e}, "", nil); err != nil {
			t.Fatalf("replay %s %s/%s: %v", e.Type, e.AggregateType, e.AggregateID, err)
		}
	}
	// Not projections: leases and hosts, and the task log lines (and
	// their count) that AppendTaskLogs writes without events.
	skip := map[string]bool{"runtime_events": true, "hosts": true, "session_leases": true, "task_logs": true}
	want, got := rawDB(t, old.OpenedWith()), rawDB(t, fresh.OpenedWith())
	tables := tableNames(t, want)
	if len(tables) < 10 {
		t.Fatalf("tables %v", tables)
	}
	for _, table := range tables {
		if skip[table] {
			continue
		}
		w, g := dumpTable(t, want, table), dumpTable(t, got, table)
		if !reflect.DeepEqual(w, g) {
			t.Errorf("table %s after replay:\n got %v\nwant %v", table, g, w)
		}
	}
}

func tableNames(t *testing.T, db rawConn) []string {
	t.Helper()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if db.pg {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
  AND table_name <> 'demiurge_schema' ORDER BY table_name COLLATE "C"`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// dumpTable returns the rows of table, ordered by their first two columns
// (as text, the same order whatever the engine);
// JSON objects are compared decoded (a payload struct orders its keys as
// it declares them, where the old build sorted them), and tasks.log_lines
// is left out (AppendTaskLogs counts it without events).
func dumpTable(t *testing.T, db rawConn, table string) [][]any {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM ` + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var row []any
		for i, c := range cols {
			if table == "tasks" && c == "log_lines" || c == "rowid" { // rowid: PostgreSQL's column
				continue
			}
			v := vals[i]
			if s, ok := v.(string); ok && strings.HasPrefix(s, "{") {
				var obj map[string]any
				if json.Unmarshal([]byte(s), &obj) == nil {
					v = obj
				}
			}
			row = append(row, c, v)
		}
		out = append(out, row)
	}
	// row holds column, value pairs: order by the first two values.
	key := func(r []any) string { return fmt.Sprint(r[1]) + "\x00" + fmt.Sprint(r[3]) }
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// TestProjectionFromValueEqualsFromJSON: an event NewEvent built is
// projected from the value it encoded, a stored one from its JSON; both
// give the same rows.
func TestProjectionFromValueEqualsFromJSON(t *testing.T) {
	yes, no, one := true, false, 1
	cutoff := "msg_1"
	evs := []demiurge.Event{
		demiurge.NewEvent(demiurge.AggSession, "session_1", demiurge.SessionCreatedPayload{CoreID: "assistant", Channel: "cli",
			SessionTarget: demiurge.SessionTarget{ConversationKey: "cli:k", Workspace: "/w", Metadata: map[string]any{"a": 1}},
			Owner:         &demiurge.SessionOwnerPayload{Kind: demiurge.AuthorityOperator, PrincipalID: demiurge.OperatorPrincipalID}}),
		demiurge.NewEvent(demiurge.AggMessage, "msg_1", demiurge.MessagePersistedPayload{SessionID: "session_1", TurnID: "turn_1",
			Role: demiurge.RoleUser, Visible: &yes, Content: &demiurge.MessageBody{Text: "hello there", ModelVisible: &no, Metadata: map[string]any{"k": "v"}}}),
		demiurge.NewEvent(demiurge.AggSession, "session_1", demiurge.SessionUpdatedPayload{Title: "t", Touch: &no,
			SessionTarget: demiurge.SessionTarget{BootstrapInitialized: true, CompactedUntilMessageID: &cutoff}}),
		demiurge.NewEvent(demiurge.AggTurn, "turn_1", demiurge.TurnStartedPayload{SessionID: "session_1", CoreID: "assistant", HostID: "host_1"}),
		demiurge.NewEvent(demiurge.AggToolCall, "call_1", demiurge.ToolCallStartedPayload{TurnID: "turn_1", StepID: "s1", ToolName: "read_file",
			Args: map[string]any{"path": "a", "n": 2}}),
		demiurge.NewEvent(demiurge.AggToolCall, "call_1", demiurge.ToolCallFailedPayload{TurnID: "turn_1", ToolName: "read_file",
			EffectError: &demiurge.EffectError{Code: "denied"}, Result: map[string]any{"is_error": true}}),
		demiurge.NewEvent(demiurge.AggTurn, "turn_1", demiurge.TurnFailedPayload{Error: &demiurge.ErrorInfo{Code: "internal", Message: "boom"}}),
		demiurge.NewEvent(demiurge.AggTask, "task_1", demiurge.TaskSubmittedPayload{Kind: "terminal.exec", OwnerSessionID: "session_1",
			Source: &demiurge.TaskSource{Actor: "a", Metadata: map[string]any{}}, Action: map[string]any{"x": 1}}),
		demiurge.NewEvent(demiurge.AggTask, "task_1", demiurge.TaskStartedPayload{HostID: "host_1"}),
		demiurge.NewEvent(demiurge.AggTask, "task_1", demiurge.TaskProcessRecordedPayload{PID: 7, Marker: "m"}),
		demiurge.NewEvent(demiurge.AggTask, "task_1", demiurge.TaskSucceededPayload{ResultRef: "r", Metadata: map[string]any{"m": 1}}),
		demiurge.NewEvent(demiurge.AggWork, "work_1", demiurge.WorkEnqueuedPayload{Kind: demiurge.WorkKindTaskCompletion,
			NextAttemptAt: "2026-01-02T03:04:05Z", Payload: demiurge.TaskCompletionReadyPayload{TaskID: "task_1", LogTail: []string{}}}),
		demiurge.NewEvent(demiurge.AggWork, "work_1", demiurge.WorkClaimedPayload{ClaimID: "c", OwnerID: "o", Attempts: &one,
			LeaseExpiresAt: "2026-01-02T03:04:05.5+01:00"}),
		demiurge.NewEvent(demiurge.AggTaskCompletion, "work_1", demiurge.TaskCompletionReadyPayload{TaskID: "task_1"}),
		demiurge.NewEvent(demiurge.AggDelivery, "delivery_1", demiurge.DeliveryQueuedPayload{Channel: "cli", Target: map[string]any{"k": "v"},
			Payload: map[string]any{"message_id": "msg_1"}}),
		demiurge.NewEvent(demiurge.AggDelivery, "delivery_1", demiurge.DeliveryFailedPayload{Attempts: &one, LastError: "e", MessageID: "msg_1"}),
		demiurge.NewEvent(demiurge.AggScheduler, "assistant:daily", demiurge.SchedulerClaimedPayload{CoreID: "assistant", ScheduleID: "daily",
			DueAt: "2026-01-02T03:04:05Z", TaskID: "run_1"}),
		demiurge.NewEvent(demiurge.AggArtifact, "artifact_1", demiurge.ArtifactStoredPayload{Kind: "file", URI: "u"}),
	}
	fromValue, fromJSON := demiurgetest.MustOpenDB(t, store.Options{Now: newClock().Now}), demiurgetest.MustOpenDB(t, store.Options{Now: newClock().Now})
	for _, e := range evs {
		if e.Body() == nil {
			t.Fatalf("%s: NewEvent kept no value", e.Type)
		}
		mustAppend(t, fromValue, "", e)
		mustAppend(t, fromJSON, "", demiurge.Event{AggregateType: e.AggregateType, AggregateID: e.AggregateID, Type: e.Type, Payload: e.Payload})
	}
	a, b := rawDB(t, fromValue.OpenedWith()), rawDB(t, fromJSON.OpenedWith())
	for _, table := range tableNames(t, a) {
		if table == "runtime_events" || table == "hosts" {
			continue
		}
		if got, want := dumpTable(t, a, table), dumpTable(t, b, table); !reflect.DeepEqual(got, want) {
			t.Errorf("table %s projected from values:\n %v\nfrom JSON:\n %v", table, got, want)
		}
	}
}
