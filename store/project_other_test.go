package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func TestProjectTurns(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	start := func(id string) {
		mustAppend(t, db, "", ev(demiurge.AggTurn, id, demiurge.EvTurnStarted, map[string]any{
			"session_id": "session_t", "core_id": "assistant", "core_revision": "rev1", "host_id": "host_1", "input_ref": "msg_in"}))
	}
	tests := []struct {
		typ, status string
		payload     map[string]any
		wantResult  string
		wantErr     map[string]any
	}{
		{demiurge.EvTurnCompleted, "completed", map[string]any{"result_ref": "msg_out"}, "msg_out", nil},
		{demiurge.EvTurnCompleted, "needs_user", map[string]any{"status": "needs_user"}, "", nil},
		{demiurge.EvTurnFailed, "failed", map[string]any{"error": map[string]any{"code": "provider", "message": "boom"}}, "", map[string]any{"code": "provider", "message": "boom"}},
		{demiurge.EvTurnCancelled, "cancelled", nil, "", nil},
		{demiurge.EvTurnLost, "lost", map[string]any{"error": map[string]any{"code": "lost", "message": "gone"}}, "", map[string]any{"code": "lost", "message": "gone"}},
	}
	for i, tt := range tests {
		id := "turn_" + itoa(i)
		start(id)
		tr, err := db.Turn(ctx, id)
		if err != nil || tr.Status != demiurge.TurnRunning || tr.HostID != "host_1" || tr.CoreRevision != "rev1" || tr.CoreID != "assistant" || !tr.CompletedAt.IsZero() {
			t.Fatalf("%s started: %+v, %v", tt.typ, tr, err)
		}
		clock.Advance(time.Second)
		mustAppend(t, db, "", ev(demiurge.AggTurn, id, tt.typ, tt.payload))
		tr, _ = db.Turn(ctx, id)
		if string(tr.Status) != tt.status || tr.ResultRef != tt.wantResult || !tr.CompletedAt.Equal(clock.Now()) {
			t.Fatalf("%s: %+v, want status %s result %q", tt.typ, tr, tt.status, tt.wantResult)
		}
		if tt.wantErr != nil && (tr.Error["code"] != tt.wantErr["code"] || tr.Error["message"] != tt.wantErr["message"]) {
			t.Fatalf("%s error %v, want %v", tt.typ, tr.Error, tt.wantErr)
		}
		if tt.wantErr == nil && tr.Error != nil {
			t.Fatalf("%s error %v, want none", tt.typ, tr.Error)
		}
	}
	_, err := db.Turn(ctx, "turn_missing")
	wantCode(t, err, demiurge.ENOTFOUND)
	if err.Error() != "turn not found: turn_missing" {
		t.Fatalf("error %q", err)
	}
}

func TestProjectToolCalls(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	for i, typ := range []string{demiurge.EvToolCallCompleted, demiurge.EvToolCallFailed, demiurge.EvToolCallCompleted} {
		id := "call_" + itoa(i)
		mustAppend(t, db, "", ev(demiurge.AggToolCall, id, demiurge.EvToolCallStarted, map[string]any{
			"turn_id": "turn_1", "step_id": "turn_1_step_1", "tool_name": "read_file", "args": map[string]any{"path": "a"}}))
		p := map[string]any{"result": map[string]any{"content": "r" + itoa(i)}}
		if i == 2 {
			p["status"] = "denied"
		}
		mustAppend(t, db, "", ev(demiurge.AggToolCall, id, typ, p))
	}
	calls, err := db.ToolCalls(ctx, "turn_1")
	if err != nil || len(calls) != 3 {
		t.Fatalf("ToolCalls = %v, %v", calls, err)
	}
	for i, want := range []string{"succeeded", "failed", "denied"} {
		c := calls[i]
		if c.CallID != "call_"+itoa(i) || c.Status != want || c.ToolName != "read_file" || c.StepID != "turn_1_step_1" ||
			c.Args["path"] != "a" || c.Result["content"] != "r"+itoa(i) || c.CompletedAt.IsZero() {
			t.Fatalf("call %d = %+v, want status %s", i, c, want)
		}
	}
}

func TestProjectDeliveries(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	mustAppend(t, db, "", ev(demiurge.AggDelivery, "delivery_1", demiurge.EvDeliveryQueued, map[string]any{
		"owner_turn_id": "turn_1", "channel": "telegram", "target": map[string]any{"chat": 1},
		"idempotency_key": "d1", "payload": map[string]any{"text": "hi"}}))
	d, err := db.Delivery(ctx, "delivery_1")
	if err != nil || d.Status != "queued" || d.Attempts != 0 || d.Channel != "telegram" || d.Target["chat"] != float64(1) ||
		d.Payload["text"] != "hi" || d.IdempotencyKey != "d1" || d.OwnerTurnID != "turn_1" {
		t.Fatalf("queued delivery %+v, %v", d, err)
	}
	steps := []struct {
		typ       string
		p         map[string]any
		status    string
		attempts  int
		lastError string
	}{
		{demiurge.EvDeliverySending, map[string]any{"attempts": 1, "host_id": "host_1"}, "sending", 1, ""},
		{demiurge.EvDeliveryFailed, map[string]any{"last_error": "503"}, "failed", 1, "503"},
		{demiurge.EvDeliveryRetryScheduled, map[string]any{"attempts": 2, "last_error": "again"}, "retry_scheduled", 2, "again"},
		{demiurge.EvDeliveryUnrouted, nil, "unrouted", 2, ""},
		{demiurge.EvDeliveryUnknown, map[string]any{"last_error": "lost"}, "unknown", 2, "lost"},
		{demiurge.EvDeliverySent, nil, "sent", 2, ""},
	}
	for _, s := range steps {
		clock.Advance(time.Second)
		mustAppend(t, db, "", ev(demiurge.AggDelivery, "delivery_1", s.typ, s.p))
		d, _ := db.Delivery(ctx, "delivery_1")
		if d.Status != s.status || d.Attempts != s.attempts || d.LastError != s.lastError {
			t.Fatalf("after %s: status %s attempts %d last_error %q; want %s %d %q", s.typ, d.Status, d.Attempts, d.LastError, s.status, s.attempts, s.lastError)
		}
		if (s.typ == demiurge.EvDeliverySent) != !d.SentAt.IsZero() {
			t.Fatalf("after %s: sent_at %v", s.typ, d.SentAt)
		}
	}
	if d, _ := db.Delivery(ctx, "delivery_1"); !d.SentAt.Equal(clock.Now()) {
		t.Fatalf("sent_at %v, want event time %v", d.SentAt, clock.Now())
	}
	sentAt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mustAppend(t, db, "", ev(demiurge.AggDelivery, "delivery_1", demiurge.EvDeliverySent, map[string]any{"sent_at": sentAt}))
	if d, _ := db.Delivery(ctx, "delivery_1"); !d.SentAt.Equal(sentAt) {
		t.Fatalf("sent_at %v, want payload time %v", d.SentAt, sentAt)
	}
	if got := row(t, db, "outbox", map[string]any{"delivery_id": "delivery_1"})["host_id"]; got != "host_1" {
		t.Fatalf("outbox host_id %v", got)
	}
	_, err = db.Delivery(ctx, "delivery_x")
	wantCode(t, err, demiurge.ENOTFOUND)
}

func TestProjectWorkItems(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	next := clock.Now().Add(time.Hour)
	mustAppend(t, db, "", ev(demiurge.AggWork, "work_1", demiurge.EvWorkEnqueued, map[string]any{
		"kind": "delivery.send", "owner_session_id": "session_1", "owner_turn_id": "turn_1", "parent_work_id": "task_1",
		"next_attempt_at": next.Format(time.RFC3339), "payload": map[string]any{"delivery_id": "delivery_1"}}))
	w, err := db.WorkItem(ctx, "work_1")
	if err != nil || w.Status != "queued" || w.Kind != "delivery.send" || w.OwnerSessionID != "session_1" ||
		w.ParentWorkID != "task_1" || !w.NextAttemptAt.Equal(next) || w.Payload["delivery_id"] != "delivery_1" {
		t.Fatalf("enqueued %+v, %v", w, err)
	}
	lease := clock.Now().Add(time.Minute)
	steps := []struct {
		typ        string
		p          map[string]any
		status     string
		terminal   bool
		check      func(demiurge.WorkItem) bool
		checkLabel string
	}{
		{demiurge.EvWorkClaimed, map[string]any{"claim_id": "claim_1", "owner_id": "w", "claimed_at": clock.Now(), "lease_expires_at": lease, "attempts": 1},
			"claimed", false, func(w demiurge.WorkItem) bool {
				return w.ClaimID == "claim_1" && w.OwnerID == "w" && w.Attempts == 1 && w.LeaseExpiresAt.Equal(lease) && w.NextAttemptAt.IsZero()
			}, "claim fields set, next_attempt_at cleared"},
		{demiurge.EvWorkRunning, nil, "running", false, func(w demiurge.WorkItem) bool { return w.ClaimID == "claim_1" }, "claim kept"},
		{demiurge.EvWorkHeartbeat, map[string]any{"lease_expires_at": lease.Add(time.Minute)}, "running", false,
			func(w demiurge.WorkItem) bool { return w.LeaseExpiresAt.Equal(lease.Add(time.Minute)) }, "lease extended"},
		{demiurge.EvWorkSending, nil, "sending", false, nil, ""},
		{demiurge.EvWorkFailed, map[string]any{"status": "retry_scheduled", "last_error": "503", "clear_claim": true, "next_attempt_at": next},
			"retry_scheduled", false, func(w demiurge.WorkItem) bool {
				return w.ClaimID == "" && w.OwnerID == "" && w.LeaseExpiresAt.IsZero() && w.LastError == "503" && w.NextAttemptAt.Equal(next)
			}, "claim cleared, retry time set"},
		{demiurge.EvWorkRecovered, nil, "retry_scheduled", false, nil, ""},
		{demiurge.EvWorkSucceeded, map[string]any{"external_ref": "msg_9"}, "succeeded", true,
			func(w demiurge.WorkItem) bool { return w.ExternalRef == "msg_9" && w.LastError == "503" }, "external ref set, last_error kept"},
	}
	for _, s := range steps {
		clock.Advance(time.Second)
		mustAppend(t, db, "", ev(demiurge.AggWork, "work_1", s.typ, s.p))
		w, _ := db.WorkItem(ctx, "work_1")
		if w.Status != s.status || !w.UpdatedAt.Equal(clock.Now()) || (!w.CompletedAt.IsZero()) != s.terminal {
			t.Fatalf("after %s: status %s updated %v completed %v; want %s terminal=%v", s.typ, w.Status, w.UpdatedAt, w.CompletedAt, s.status, s.terminal)
		}
		if s.check != nil && !s.check(w) {
			t.Fatalf("after %s: %s: %+v", s.typ, s.checkLabel, w)
		}
	}
	for typ, status := range map[string]string{
		demiurge.EvWorkCancelled: "cancelled", demiurge.EvWorkUnknown: "unknown",
		demiurge.EvWorkAcknowledged: "acknowledged", demiurge.EvWorkCorrupt: "corrupt", demiurge.EvWorkFailed: "failed",
	} {
		id := "work_" + status
		mustAppend(t, db, "", ev(demiurge.AggWork, id, demiurge.EvWorkEnqueued, map[string]any{"kind": "task.completion"}))
		mustAppend(t, db, "", ev(demiurge.AggWork, id, typ, nil))
		w, _ := db.WorkItem(ctx, id)
		if w.Status != status || (!w.CompletedAt.IsZero()) != store.WorkTerminal(status) {
			t.Fatalf("%s: status %s completed_at %v", typ, w.Status, w.CompletedAt)
		}
	}
}

func TestProjectTasks(t *testing.T) {
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	submit := func(id string) {
		mustAppend(t, db, "", ev(demiurge.AggTask, id, demiurge.EvTaskSubmitted, map[string]any{
			"kind": "terminal.exec", "owner_session_id": "session_1", "owner_turn_id": "turn_1", "core_id": "assistant",
			"host_id": "host_1", "source": map[string]any{"actor": "tool"}, "notify_policy": "completion_event",
			"action": map[string]any{"command": "ls"}}))
	}
	submit("task_a")
	tk, err := db.Task(ctx, "task_a")
	if err != nil || tk.Status != "queued" || tk.RootTaskID != "task_a" || tk.ParentTaskID != "" || tk.HostID != "host_1" ||
		tk.Source["actor"] != "tool" || tk.NotifyPolicy != "completion_event" || tk.Kind != "terminal.exec" || tk.Error != nil {
		t.Fatalf("submitted %+v, %v", tk, err)
	}

	clock.Advance(time.Second)
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_a", demiurge.EvTaskStarted, map[string]any{"host_id": "host_2"}))
	tk, _ = db.Task(ctx, "task_a")
	started := clock.Now()
	if tk.Status != "running" || !tk.StartedAt.Equal(started) || !tk.CompletedAt.IsZero() || tk.HostID != "host_2" || !tk.HeartbeatAt.Equal(started) {
		t.Fatalf("started %+v", tk)
	}
	clock.Advance(time.Second)
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_a", demiurge.EvTaskBlocked, map[string]any{"summary": "need input"}))
	tk, _ = db.Task(ctx, "task_a")
	if tk.Status != demiurge.TaskBlocked || !tk.CompletedAt.IsZero() {
		t.Fatalf("blocked %+v", tk)
	}
	for i, c := range []struct {
		typ, status string
		p           map[string]any
	}{
		{demiurge.EvTaskSucceeded, "succeeded", map[string]any{"result_ref": "artifact_1"}},
		{demiurge.EvTaskFailed, "failed", map[string]any{"error": map[string]any{"message": "exit 1"}}},
		{demiurge.EvTaskCancelled, "cancelled", map[string]any{"error": map[string]any{"message": "task cancelled"}}},
		{demiurge.EvTaskLost, "lost", map[string]any{"status": "lost", "error": map[string]any{"message": "gone"}}},
	} {
		id := "task_t" + itoa(i)
		submit(id)
		clock.Advance(time.Second)
		mustAppend(t, db, "", ev(demiurge.AggTask, id, c.typ, c.p))
		tk, _ := db.Task(ctx, id)
		if tk.Status != c.status || !tk.CompletedAt.Equal(clock.Now()) || !tk.StartedAt.IsZero() {
			t.Fatalf("%s: %+v", c.typ, tk)
		}
		if ref, _ := c.p["result_ref"].(string); tk.ResultRef != ref {
			t.Fatalf("%s result_ref %q", c.typ, tk.ResultRef)
		}
		if e, ok := c.p["error"].(map[string]any); ok && tk.Error["message"] != e["message"] {
			t.Fatalf("%s error %v", c.typ, tk.Error)
		}
	}

	mustAppend(t, db, "", ev(demiurge.AggTask, "task_a", demiurge.EvTaskLog, map[string]any{"text": "line 1"}),
		ev(demiurge.AggTask, "task_a", demiurge.EvTaskLog, map[string]any{"text": "oops", "stream": "stderr"}))
	logs, err := db.Query(ctx, store.Query{Table: "task_logs", Where: map[string]any{"task_id": "task_a"}, OrderBy: "seq"})
	if err != nil || len(logs) != 2 || logs[0]["stream"] != "stdout" || logs[0]["text"] != "line 1" || logs[1]["stream"] != "stderr" {
		t.Fatalf("task logs %v, %v", logs, err)
	}
	_, err = db.Task(ctx, "task_missing")
	wantCode(t, err, demiurge.ENOTFOUND)
	if err.Error() != "task not found: task_missing" {
		t.Fatalf("error %q", err)
	}
}

func TestProjectArtifactsAndScheduler(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	mustAppend(t, db, "", ev(demiurge.AggArtifact, "artifact_1", demiurge.EvArtifactStored, map[string]any{
		"owner_turn_id": "turn_1", "kind": "file", "uri": "artifacts/a.txt", "metadata": map[string]any{"bytes": 3}}))
	a := row(t, db, "artifacts", map[string]any{"artifact_id": "artifact_1"})
	if a["kind"] != "file" || a["uri"] != "artifacts/a.txt" || a["owner_turn_id"] != "turn_1" || a["metadata"].(map[string]any)["bytes"] != float64(3) {
		t.Fatalf("artifact %v", a)
	}

	due := time.Date(2026, 7, 4, 9, 0, 0, 0, time.UTC)
	key := map[string]any{"core_id": "assistant", "schedule_id": "daily", "due_at": due}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range key {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	where := map[string]any{"core_id": "assistant", "schedule_id": "daily", "due_at": demiurge.FormatTime(due)}
	mustAppend(t, db, "", ev(demiurge.AggScheduler, "assistant:daily", demiurge.EvSchedulerScheduled, with(nil)))
	if s := row(t, db, "scheduler_instances", where); s["claim_status"] != "scheduled" {
		t.Fatalf("scheduled %v", s)
	}
	mustAppend(t, db, "", ev(demiurge.AggScheduler, "assistant:daily", demiurge.EvSchedulerClaimed,
		with(map[string]any{"claim_id": "claim_1", "task_id": "task_1", "lease_expires_at": due.Add(time.Minute)})))
	if s := row(t, db, "scheduler_instances", where); s["claim_status"] != "claimed" || s["claim_id"] != "claim_1" || s["task_id"] != "task_1" {
		t.Fatalf("claimed %v", s)
	}
	mustAppend(t, db, "", ev(demiurge.AggScheduler, "assistant:daily", demiurge.EvSchedulerCompleted, with(nil)))
	if s := row(t, db, "scheduler_instances", where); s["claim_status"] != "completed" {
		t.Fatalf("completed %v", s)
	}
	mustAppend(t, db, "", ev(demiurge.AggScheduler, "assistant:daily", demiurge.EvSchedulerError, with(nil)))
	if s := row(t, db, "scheduler_instances", where); s["claim_status"] != "error" {
		t.Fatalf("error %v", s)
	}
	_, err := db.Append(context.Background(), []demiurge.Event{ev(demiurge.AggScheduler, "x", demiurge.EvSchedulerScheduled, map[string]any{"core_id": "a"})}, "", nil)
	wantCode(t, err, demiurge.EINVALID)
}

// Audit and host events, and the task-completion pair, change no projection.
func TestEventsOnlyTypes(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	tables := []string{"sessions", "turns", "messages", "tasks", "outbox", "runtime_work_items", "session_owners", "artifacts"}
	before := map[string]int{}
	for _, tb := range tables {
		before[tb] = count(t, db, tb, nil)
	}
	mustAppend(t, db, "",
		ev(demiurge.AggPrincipalScope, "p", demiurge.EvPrincipalOperatorIssued, map[string]any{"reason": "x"}),
		ev(demiurge.AggPrincipalScope, "p", demiurge.EvPrincipalOwnerLookupDenied, map[string]any{"reason": "not_found"}),
		ev(demiurge.AggHost, "host_x", demiurge.EvHostStarted, map[string]any{"pid": 1}),
		ev(demiurge.AggHost, "host_x", demiurge.EvHostStopped, nil),
		ev(demiurge.AggHost, "host_x", demiurge.EvHostReconciled, nil),
		ev(demiurge.AggTaskCompletion, "task_event_1", demiurge.EvTaskCompletionReady, map[string]any{"task_id": "t"}),
		ev(demiurge.AggTaskCompletion, "task_event_1", demiurge.EvTaskCompletionAcknowledged, nil),
	)
	for _, tb := range tables {
		if got := count(t, db, tb, nil); got != before[tb] {
			t.Fatalf("%s rows %d → %d", tb, before[tb], got)
		}
	}
	var n int
	if err := rawDB(t, db.OpenedWith()).QueryRow(`SELECT count(*) FROM hosts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("host.* events wrote %d hosts rows (%v)", n, err)
	}
}
