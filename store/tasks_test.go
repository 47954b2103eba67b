package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

func TestTaskCancelRequests(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	for _, id := range []string{"task_a", "task_b", "task_done", "task_other"} {
		host := "host_1"
		if id == "task_other" {
			host = "host_2"
		}
		submitTask(t, db, id, map[string]any{"host_id": host})
	}
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_done", demiurge.EvTaskStarted, nil),
		ev(demiurge.AggTask, "task_done", demiurge.EvTaskSucceeded, nil))
	got, err := db.TaskCancelRequests(ctx, "host_1")
	if err != nil || len(got) != 0 {
		t.Fatalf("no requests yet: %v, %v", got, err)
	}
	for _, id := range []string{"task_a", "task_done", "task_other"} {
		mustAppend(t, db, "", ev(demiurge.AggTask, id, demiurge.EvTaskCancelRequested, map[string]any{"reason": "first"}))
	}
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_a", demiurge.EvTaskCancelRequested, map[string]any{"reason": "second"}))
	got, err = db.TaskCancelRequests(ctx, "host_1")
	if err != nil || len(got) != 1 || got["task_a"] != "first" {
		t.Fatalf("requests of host_1 = %v, %v; want task_a with the first reason", got, err)
	}
	// The request does not change the task's status.
	if tk, _ := db.Task(ctx, "task_a"); tk.Status != demiurge.TaskQueued {
		t.Fatalf("status %s", tk.Status)
	}
}

func TestTasksAwaitingCompletion(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	end := func(id string, p map[string]any) {
		submitTask(t, db, id, p)
		mustAppend(t, db, "", ev(demiurge.AggTask, id, demiurge.EvTaskStarted, nil),
			ev(demiurge.AggTask, id, demiurge.EvTaskFailed, map[string]any{"error": map[string]any{"message": "x"}}))
	}
	end("task_notify", map[string]any{"owner_session_id": "session_1"})
	end("task_policy", map[string]any{"owner_session_id": "session_1", "notify_policy": "return_to_parent"})
	end("task_silent", map[string]any{"owner_session_id": "session_1", "notify_policy": "silent"})
	end("task_unowned", nil)
	submitTask(t, db, "task_open", map[string]any{"owner_session_id": "session_1"})

	ids := func() []string {
		tasks, err := db.TasksAwaitingCompletion(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tk := range tasks {
			out = append(out, tk.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"task_notify", "task_policy"}) {
		t.Fatalf("awaiting %v", got)
	}
	mustAppend(t, db, "task:task_notify:completion_ready",
		ev(demiurge.AggTaskCompletion, "task_event_1", demiurge.EvTaskCompletionReady, map[string]any{"task_id": "task_notify"}))
	if got := ids(); !slices.Equal(got, []string{"task_policy"}) {
		t.Fatalf("after a completion: %v", got)
	}
}

func TestAcknowledgeTaskCompletion(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	w := enqueue(t, db, "task_event_1", demiurge.WorkKindTaskCompletion)
	_, err := db.AcknowledgeTaskCompletion(ctx, w.ID, "claim_none")
	wantCode(t, err, demiurge.ECONFLICT)
	claimed, err := db.ClaimDueWork(ctx, demiurge.WorkKindTaskCompletion, "worker", time.Minute, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %v", claimed, err)
	}
	got, err := db.AcknowledgeTaskCompletion(ctx, w.ID, claimed[0].ClaimID)
	if err != nil || got.Status != demiurge.WorkAcknowledged || got.CompletedAt.IsZero() {
		t.Fatalf("acknowledge: %+v, %v", got, err)
	}
	evs, _ := db.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggTaskCompletion, AggregateID: w.ID})
	if len(evs) != 1 || evs[0].Type != demiurge.EvTaskCompletionAcknowledged ||
		evs[0].IdempotencyKey != "task_completion:"+w.ID+":acknowledged" {
		t.Fatalf("events %+v", evs)
	}
	_, err = db.AcknowledgeTaskCompletion(ctx, w.ID, claimed[0].ClaimID)
	wantCode(t, err, demiurge.ECONFLICT)
	_, err = db.AcknowledgeTaskCompletion(ctx, "task_event_missing", "claim_x")
	wantCode(t, err, demiurge.ENOTFOUND)
	other := enqueue(t, db, "delivery_1", demiurge.WorkKindDeliverySend)
	c, _, _ := db.ClaimWork(ctx, other.ID, "worker", time.Minute)
	_, err = db.AcknowledgeTaskCompletion(ctx, other.ID, c.ClaimID)
	wantCode(t, err, demiurge.EINVALID)
}

// A lost task reports its recorded process, so the Host can end the group
// if it is still the same process; a completion claimed by the gone Host
// goes back for retry once its lease expired.
func TestReconcileReportsLostTaskProcesses(t *testing.T) {
	clock := newClock()
	path := demiurgetest.TestDatabase(t)
	db := demiurgetest.MustOpenPath(t, path, store.Options{Now: clock.Now})
	frozen := newClock() // a second handle whose clock stays behind: its Host's lease expires
	stale := demiurgetest.MustOpenPath(t, path, store.Options{Now: frozen.Now})
	ctx := context.Background()
	self := startHost(t, db, store.HostInfo{})
	pid, marker := deadChild(t)
	gone := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker})
	// A Host of another machine: its recorded process names a pid there,
	// never to be signalled here, whatever it is on this machine.
	far := startHost(t, stale, store.HostInfo{PID: 1, Hostname: "elsewhere.example"})

	child := exec.Command("sleep", "60")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // leads its own group, like a task's command
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill(); <-waited })
	childMarker, err := process.StartMarker(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	submitTask(t, db, "task_gone", map[string]any{"host_id": gone.ID()})
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_gone", demiurge.EvTaskProcessRecorded,
		map[string]any{"pid": child.Process.Pid, "marker": childMarker}))
	submitTask(t, db, "task_gone_noproc", map[string]any{"host_id": gone.ID()})
	submitTask(t, db, "task_far", map[string]any{"host_id": far.ID()})
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_far", demiurge.EvTaskProcessRecorded,
		map[string]any{"pid": child.Process.Pid, "marker": childMarker}))
	submitTask(t, db, "task_live", map[string]any{"host_id": self.ID()})
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_live", demiurge.EvTaskProcessRecorded,
		map[string]any{"pid": os.Getpid(), "marker": "m"}))

	enqueue(t, db, "task_event_1", demiurge.WorkKindTaskCompletion)
	if c, err := db.ClaimDueWork(ctx, demiurge.WorkKindTaskCompletion, gone.ID(), 30*time.Second, 1); err != nil || len(c) != 1 {
		t.Fatalf("claim: %v, %v", c, err)
	}
	clock.Advance(time.Minute)

	rep, err := db.Reconcile(ctx, self.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TaskProcess{{TaskID: "task_gone", PID: child.Process.Pid, Marker: childMarker}}
	if !slices.Equal(rep.LostTaskProcesses, want) || rep.TasksLost != 3 {
		t.Fatalf("report %+v, want lost processes %+v", rep, want)
	}
	if rep.Work.Recovered != 1 {
		t.Fatalf("work recovery %+v", rep.Work)
	}
	w, _ := db.WorkItem(ctx, "task_event_1")
	if w.Status != demiurge.WorkRetryScheduled || w.ClaimID != "" {
		t.Fatalf("expired completion claim: %+v", w)
	}
	again, err := db.ClaimDueWork(ctx, demiurge.WorkKindTaskCompletion, self.ID(), time.Minute, 1)
	if err != nil || len(again) != 1 {
		t.Fatalf("retry claim: %v, %v", again, err)
	}
	if err := process.KillGroupIfSame(child.Process.Pid, childMarker); err != nil {
		t.Fatalf("kill the recorded process: %v", err)
	}
	select {
	case err := <-waited:
		waited <- err
		if err == nil {
			t.Fatal("the recorded process exited normally")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the recorded process survived")
	}
}

// A schema 2 database gains numbered log lines, line counters, and no
// completions for tasks that ended before the upgrade.
func TestMigrationNumbersOldLogs(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "the SQLite migration chain from a version-2 file")
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"migrations/0001_init.sql", "migrations/0002_message_edits.sql"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, q := range []string{
		fmt.Sprintf("PRAGMA application_id = %d", store.ApplicationID),
		"PRAGMA user_version = 2",
		`INSERT INTO tasks (task_id, kind, status, owner_session_id, created_at) VALUES
		   ('task_old', 'terminal.exec', 'succeeded', 'session_1', 'x'),
		   ('task_open', 'terminal.exec', 'running', 'session_1', 'x')`,
		`INSERT INTO task_logs (task_id, stream, text, created_at) VALUES
		   ('task_open', 'stdout', 'a', 'x'), ('task_old', 'stdout', 'z', 'x'), ('task_open', 'stdout', 'b', 'x')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db := demiurgetest.MustOpenPath(t, path, store.Options{})
	ctx := context.Background()
	rows, err := db.Query(ctx, store.Query{Table: "task_logs", OrderBy: "seq"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%v:%v:%v", r["task_id"], r["line"], r["text"]))
	}
	if got, want := strings.Join(lines, " "), "task_open:1:a task_old:1:z task_open:2:b"; got != want {
		t.Fatalf("numbered lines %q, want %q", got, want)
	}
	if err := db.AppendTaskLogs(ctx, "task_open", logLines(0, 2), 3); err != nil {
		t.Fatal(err)
	}
	tail, _ := db.TaskLogTail(ctx, "task_open", 10)
	if len(tail) != 3 || tail[0].Text != "b" || tail[2].Text != "line 1" {
		t.Fatalf("tail after upgrade %+v", tail)
	}
	awaiting, err := db.TasksAwaitingCompletion(ctx, 0)
	if err != nil || len(awaiting) != 0 {
		t.Fatalf("tasks ended before the upgrade await completions: %v, %v", awaiting, err)
	}
}

// Each batch of AppendTaskBatches stands alone: a failing guard undoes only
// its own batch, a replayed key returns the earlier events, and every
// result carries the task row written in the same transaction.
func TestAppendTaskBatches(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	submitTask(t, db, "task_a", nil)
	first := mustAppend(t, db, "k_b", ev(demiurge.AggTask, "task_b", demiurge.EvTaskSubmitted, map[string]any{"kind": "agent.spawn"}))
	batches := []demiurge.EventBatch{
		{Events: []demiurge.Event{ev(demiurge.AggTask, "task_a", demiurge.EvTaskStarted, nil)},
			Expected: &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: "task_a", LastSeq: 999}},
		{Events: []demiurge.Event{ev(demiurge.AggTask, "task_c", demiurge.EvTaskSubmitted, map[string]any{"kind": "evolver.run"}),
			ev(demiurge.AggTask, "task_c", demiurge.EvTaskStarted, map[string]any{"host_id": "host_1"})},
			Expected: &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: "task_c"}},
		{Events: []demiurge.Event{ev(demiurge.AggTask, "task_b", demiurge.EvTaskSubmitted, map[string]any{"kind": "other"})}, IdempotencyKey: "k_b"},
		{Events: []demiurge.Event{ev(demiurge.AggTask, "task_none", demiurge.EvTaskStarted, nil)}},
		{},
	}
	type res struct {
		stored []demiurge.Event
		tk     demiurge.Task
		err    error
	}
	var got []res
	err := db.AppendTaskBatches(ctx, batches, func(i int, stored []demiurge.Event, tk demiurge.Task, err error) {
		if i != len(got) {
			t.Fatalf("result %d out of order", i)
		}
		got = append(got, res{stored, tk, err})
	})
	if err != nil || len(got) != len(batches) {
		t.Fatalf("%d results, %v", len(got), err)
	}
	wantCode(t, got[0].err, demiurge.ECONFLICT)
	if tk, _ := db.Task(ctx, "task_a"); tk.Status != demiurge.TaskQueued {
		t.Fatalf("a failed batch changed its task: %s", tk.Status)
	}
	if got[1].err != nil || got[1].tk.Status != demiurge.TaskRunning || got[1].tk.HostID != "host_1" || len(got[1].stored) != 2 {
		t.Fatalf("batch 1: %+v", got[1])
	}
	if got[2].err != nil || got[2].stored[0].EventID != first[0].EventID || got[2].tk.Kind != "agent.spawn" {
		t.Fatalf("replay: %+v", got[2])
	}
	wantCode(t, got[3].err, demiurge.ENOTFOUND)
	if n := countRows(t, db, "runtime_events", map[string]any{"aggregate_id": "task_none"}); n != 0 {
		t.Fatalf("a batch without a task row left %d events", n)
	}
	wantCode(t, got[4].err, demiurge.EINVALID)
}

func TestTaskCompletionLookup(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	submitTask(t, db, "task_a", map[string]any{"owner_session_id": "session_1"})
	if _, ok, err := db.TaskCompletion(ctx, "task_a"); ok || err != nil {
		t.Fatalf("before a completion: %v, %v", ok, err)
	}
	mustAppend(t, db, "task:task_a:completion_ready",
		ev(demiurge.AggTaskCompletion, "task_event_1", demiurge.EvTaskCompletionReady, map[string]any{"task_id": "task_a"}),
		ev(demiurge.AggWork, "task_event_1", demiurge.EvWorkEnqueued, map[string]any{"kind": demiurge.WorkKindTaskCompletion, "parent_work_id": "task_a"}))
	w, ok, err := db.TaskCompletion(ctx, "task_a")
	if !ok || err != nil || w.ID != "task_event_1" || w.Status != demiurge.WorkQueued {
		t.Fatalf("completion %+v, %v, %v", w, ok, err)
	}
	_, _, err = db.TaskCompletion(ctx, "task_missing")
	wantCode(t, err, demiurge.ENOTFOUND)
}
