package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

// TestQueryPlansUseIndexes checks, with SQLite's own planner, that every
// bounded read and every restart scan is served by an index and that list
// queries never sort their whole match set. The store keeps no ANALYZE
// statistics, so row counts do not change these plans: this is what keeps
// the queries fast past 10,000 rows.
func TestQueryPlansUseIndexes(t *testing.T) {
	sqliteOnly(t)
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "plan.sqlite3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	type plan struct {
		name   string
		q      string
		args   []any
		index  string // some plan line must name this index
		sortOK bool   // a temp b-tree sort of a bounded candidate set (open work) is fine
		scanOK bool   // a rowid-order scan stopped by LIMIT is fine
	}
	var plans []plan
	add := func(p plan, q string, args []any) {
		p.q, p.args = q, args
		plans = append(plans, p)
	}
	with3 := func(q string, args []any, _ bool) (string, []any) { return q, args }

	q, a := eventsQuery(demiurge.EventFilter{AggregateType: "session", AggregateID: "x", AfterSeq: 5})
	add(plan{name: "events by aggregate", index: "idx_runtime_events_aggregate"}, q, a)
	q, a = eventsQuery(demiurge.EventFilter{Type: "turn.lost"})
	add(plan{name: "events by type", index: "idx_runtime_events_type"}, q, a)
	q, a = eventsQuery(demiurge.EventFilter{AfterSeq: 9})
	add(plan{name: "events after cursor", index: "INTEGER PRIMARY KEY"}, q, a)
	q, a = recentMessagesQuery("session_x", demiurge.MessageFilter{BeforeSeq: 10, ModelVisibleOnly: true, Kind: "message", Roles: []string{"user", "assistant"}})
	add(plan{name: "recent messages", index: "idx_messages_session"}, q, a)
	q, a = recentMessagesQuery("session_x", demiurge.MessageFilter{AfterSeq: 3, ModelVisibleOnly: true, Kind: "message"})
	add(plan{name: "recent messages after a cutoff", index: "idx_messages_session"}, q, a)
	q, a = with3(listSessionsQuery(demiurge.SessionFilter{}))
	add(plan{name: "list sessions", index: "idx_sessions_updated"}, q, a)
	op := demiurge.OperatorScope("")
	q, a = with3(listSessionsQuery(demiurge.SessionFilter{CoreID: "assistant", Scope: &op}))
	add(plan{name: "list sessions by core for the operator", index: "idx_sessions_core"}, q, a)
	for name, f := range map[string]demiurge.TaskFilter{
		"all": {}, "session": {OwnerSessionID: "s"}, "parent": {ParentTaskID: "p"}, "status": {Status: "queued"},
		"kind": {Kind: "agent.spawn"}, "session+status+kind": {OwnerSessionID: "s", Status: "queued", Kind: "k"},
	} {
		q, a = listTasksQuery(f)
		add(plan{name: "list tasks: " + name, index: "idx_tasks_"}, q, a)
	}
	q, a = deliveriesQuery(demiurge.DeliveryFilter{})
	add(plan{name: "deliveries: all", scanOK: true}, q, a)
	q, a = deliveriesQuery(demiurge.DeliveryFilter{TurnID: "t"})
	add(plan{name: "deliveries: turn", index: "idx_outbox_turn"}, q, a)
	q, a = deliveriesQuery(demiurge.DeliveryFilter{Status: "sending"})
	add(plan{name: "deliveries: status", index: "idx_outbox_status"}, q, a)
	q, a = claimDueQuery("delivery.send", "2026-01-01T00:00:00.000Z", 1)
	add(plan{name: "claim due by kind", index: "idx_runtime_work_due", sortOK: true}, q, a)
	q, a = claimDueQuery("", "2026-01-01T00:00:00.000Z", 1)
	add(plan{name: "claim due of any kind", index: "idx_runtime_work_status", sortOK: true}, q, a)
	plans = append(plans, []plan{
		{name: "list turns", q: sqlListTurns, args: []any{"s", 10}, index: "idx_turns_session"},
		{name: "tool calls", q: sqlToolCalls, args: []any{"t", 10}, index: "idx_tool_calls_turn"},
		{name: "running turns", q: sqlRunningTurns, index: "idx_turns_running"},
		{name: "open tasks", q: sqlOpenTasks, index: "idx_tasks_status", sortOK: true},
		{name: "sending deliveries", q: sqlSendingDeliveries, index: "idx_outbox_status"},
		{name: "recover candidates", q: sqlRecoverCandidates, index: "idx_runtime_work_status"},
		{name: "idempotency key", q: sqlEventsByKey, args: []any{"k"}, index: "idx_runtime_events_idempotency"},
		{name: "last seq", q: sqlLastSeq, args: []any{"a", "b"}, index: "idx_runtime_events_aggregate"},
		{name: "owned session", q: sessionSelect + ` WHERE s.session_id = ? AND s.session_id IN (?, ?)`, args: []any{"a", "a", "b"}, index: "sqlite_autoindex_sessions_1"},
	}...)

	for _, p := range plans {
		rows, err := db.reader.Query("EXPLAIN QUERY PLAN "+p.q, p.args...)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		var lines []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		rows.Close()
		text := strings.Join(lines, "\n")
		if p.index != "" && !strings.Contains(text, p.index) {
			t.Errorf("%s: plan does not use %s:\n%s", p.name, p.index, text)
		}
		for _, l := range lines {
			fullScan := strings.HasPrefix(l, "SCAN ") && !strings.Contains(l, " USING ")
			if (fullScan && !p.scanOK) || (strings.Contains(l, "TEMP B-TREE") && !p.sortOK) {
				t.Errorf("%s: plan line %q:\n%s", p.name, l, text)
			}
		}
	}
}
