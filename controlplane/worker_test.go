package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

// Each path a task takes through the worker ends in exactly one terminal
// event that carries the runner's summary, error and metadata.
func TestWorkerTransitionPaths(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	cases := []struct {
		mode, status, summary, errMsg string
		meta                          map[string]any
		blocked                       bool
	}{
		{"ok", demiurge.TaskSucceeded, "all done", "", map[string]any{"exit_code": float64(0)}, false},
		{"fail", demiurge.TaskFailed, "exit status 3", "exit status 3", map[string]any{"exit_code": float64(3)}, false},
		{"err", demiurge.TaskFailed, "internal error", "internal error", nil, false},
		{"coded", demiurge.TaskFailed, "provider unreachable", "provider unreachable", nil, false},
		{"panic", demiurge.TaskFailed, "task runner panicked", "task runner panicked", nil, false},
		{"block", demiurge.TaskSucceeded, "unblocked", "", nil, true},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			sub := r.run(t, c.mode, nil)
			if sub.Status != demiurge.TaskRunning || sub.HostID != r.host.ID() || sub.StartedAt.IsZero() {
				t.Fatalf("submitted %+v", sub)
			}
			tk := r.wait(t, sub.ID)
			if tk.Status != c.status || tk.CompletedAt.IsZero() {
				t.Fatalf("final %+v, want %s", tk, c.status)
			}
			ends := terminalEvents(t, r.db, tk.ID)
			if len(ends) != 1 {
				t.Fatalf("%d terminal events", len(ends))
			}
			p := payloadOf(t, ends[0])
			if p["summary"] != c.summary {
				t.Fatalf("summary %q, want %q", p["summary"], c.summary)
			}
			if c.errMsg != "" && tk.Error["message"] != c.errMsg {
				t.Fatalf("error %v, want %q", tk.Error, c.errMsg)
			}
			if fmt.Sprint(p["metadata"]) != fmt.Sprint(orNil(c.meta)) {
				t.Fatalf("metadata %v, want %v", p["metadata"], c.meta)
			}
			if got := len(events(t, r.db, demiurge.AggTask, tk.ID, demiurge.EvTaskBlocked)); (got == 1) != c.blocked {
				t.Fatalf("%d task.blocked events", got)
			}
			if c.status == demiurge.TaskFailed {
				logs, _ := r.cp.LogTail(context.Background(), tk.ID, 10)
				if len(logs) != 1 || logs[0].Text != "error: "+c.errMsg || logs[0].Stream != "stderr" {
					t.Fatalf("failure log %+v", logs)
				}
			}
			if strings.Contains(fmt.Sprint(events(t, r.db, demiurge.AggTask, tk.ID, "")), "hunter2") {
				t.Fatal("an uncoded runner error reached the event log")
			}
		})
	}
}

func orNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// A queued task that no worker runs is cancelled in the store.
func TestWorkerCancelQueued(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	ctx := context.Background()
	for _, host := range []string{"", r.host.ID()} {
		tk, err := r.cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindAgentSpawn,
			Payload: map[string]any{"owner_session_id": "session_1"}}, controlplane.Source{HostID: host})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.w.Cancel(ctx, tk.ID, "not needed")
		if err != nil || got.Status != demiurge.TaskCancelled || got.Error["message"] != "not needed" {
			t.Fatalf("cancel queued (host %q): %+v, %v", host, got, err)
		}
		if n := len(completions(t, r.db, tk.ID)); n != 1 {
			t.Fatalf("%d completions", n)
		}
	}
	_, err := r.w.Cancel(ctx, "task_missing", "")
	wantCode(t, err, demiurge.ENOTFOUND, "task not found: task_missing")
}

// Cancelling a running task cancels the runner's context; the terminal
// event carries the runner's exit metadata, and the completion follows it.
func TestWorkerCancelRunning(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	ctx := context.Background()
	tk := r.run(t, "wait", nil)
	if got := r.w.Active(); len(got) != 1 || got[0] != tk.ID {
		t.Fatalf("active %v", got)
	}
	got, err := r.w.Cancel(ctx, tk.ID, "")
	if err != nil || got.Status != demiurge.TaskCancelled {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	ends := terminalEvents(t, r.db, tk.ID)
	if len(ends) != 1 || payloadOf(t, ends[0])["summary"] != controlplane.DefaultCancelSummary {
		t.Fatalf("terminal events %+v", ends)
	}
	meta, _ := payloadOf(t, ends[0])["metadata"].(map[string]any)
	if meta["exit_reason"] != "cancelled" || meta["exit_code"] != float64(-15) {
		t.Fatalf("exit metadata %v", meta)
	}
	ready := events(t, r.db, demiurge.AggTaskCompletion, completions(t, r.db, tk.ID)[0]["work_id"].(string), "")
	if len(ready) != 1 || ready[0].Seq <= ends[0].Seq || payloadOf(t, ready[0])["status"] != demiurge.TaskCancelled {
		t.Fatalf("completion %+v after terminal seq %d", ready, ends[0].Seq)
	}
	if len(r.w.Active()) != 0 {
		t.Fatalf("still active: %v", r.w.Active())
	}
}

// Cancel of a finished task returns it unchanged and writes nothing.
func TestWorkerCancelFinished(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	tk := r.wait(t, r.run(t, "ok", nil).ID)
	before := len(events(t, r.db, demiurge.AggTask, tk.ID, ""))
	got, err := r.w.Cancel(context.Background(), tk.ID, "too late")
	if err != nil || got.Status != demiurge.TaskSucceeded || !got.CompletedAt.Equal(tk.CompletedAt) {
		t.Fatalf("cancel finished: %+v, %v", got, err)
	}
	if after := len(events(t, r.db, demiurge.AggTask, tk.ID, "")); after != before {
		t.Fatalf("cancel of a finished task wrote %d events", after-before)
	}
}

// Two Cancels, a Wait and the runner's own end race: every caller gets the
// same final task, with one terminal event and one completion.
func TestWorkerConcurrentCancelCompleteWait(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	ctx := context.Background()
	outcomes := map[string]int{}
	for i := range 30 {
		tk := r.run(t, "wait", nil)
		var wg sync.WaitGroup
		results := make([]demiurge.Task, 3)
		errs := make([]error, 3)
		wg.Add(4)
		go func() { defer wg.Done(); results[0], errs[0] = r.w.Cancel(ctx, tk.ID, "first") }()
		go func() { defer wg.Done(); results[1], errs[1] = r.w.Cancel(ctx, tk.ID, "second") }()
		go func() { defer wg.Done(); results[2], errs[2] = r.w.Wait(ctx, tk.ID) }()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				r.gates.release(tk.ID)
			}
		}()
		wg.Wait()
		if i%2 == 1 {
			r.gates.release(tk.ID)
		}
		final, _ := r.db.Task(ctx, tk.ID)
		for j := range results {
			if errs[j] != nil || results[j].Status != final.Status || !results[j].CompletedAt.Equal(final.CompletedAt) {
				t.Fatalf("round %d caller %d: %+v, %v; final %+v", i, j, results[j], errs[j], final)
			}
		}
		if n := len(terminalEvents(t, r.db, tk.ID)); n != 1 {
			t.Fatalf("round %d: %d terminal events", i, n)
		}
		if n := len(completions(t, r.db, tk.ID)); n != 1 {
			t.Fatalf("round %d: %d completions", i, n)
		}
		outcomes[final.Status]++
	}
	t.Logf("outcomes %v", outcomes)
}

// A Cancel in one Host process reaches a task run by another: the request
// is written, the owner's poll sees it and cancels the runner, and the
// requester gets the terminal task, within a second.
func TestWorkerCancelFromAnotherProcess(t *testing.T) {
	path := dbPath(t)
	opts := controlplane.WorkerOptions{CancelPoll: 50 * time.Millisecond}
	owner := newRig(t, path, opts, nil)
	other := newRig(t, path, opts, nil)
	tk := owner.run(t, "wait", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	got, err := other.w.Cancel(ctx, tk.ID, "stopped from elsewhere")
	if err != nil || got.Status != demiurge.TaskCancelled || got.Error["message"] != "stopped from elsewhere" {
		t.Fatalf("remote cancel: %+v, %v", got, err)
	}
	t.Logf("remote cancel took %s", time.Since(start))
	if n := len(events(t, owner.db, demiurge.AggTask, tk.ID, demiurge.EvTaskCancelRequested)); n != 1 {
		t.Fatalf("%d cancel requests", n)
	}
	ends := terminalEvents(t, owner.db, tk.ID)
	if meta, _ := payloadOf(t, ends[0])["metadata"].(map[string]any); len(ends) != 1 || meta["exit_reason"] != "cancelled" {
		t.Fatalf("terminal %+v", ends)
	}
	// The owner's own Wait sees the same end.
	if mine := owner.wait(t, tk.ID); mine.Status != demiurge.TaskCancelled {
		t.Fatalf("owner sees %s", mine.Status)
	}
	// Waiting from the other process for a task that is still running.
	tk2 := owner.run(t, "wait", nil)
	short, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	got, err = other.w.Wait(short, tk2.ID)
	wantCode(t, err, demiurge.ETIMEOUT, "")
	if got.Status != demiurge.TaskRunning {
		t.Fatalf("wait timeout returned %+v", got)
	}
	owner.gates.release(tk2.ID)
	if got := other.wait(t, tk2.ID); got.Status != demiurge.TaskSucceeded {
		t.Fatalf("remote wait: %s", got.Status)
	}
}

// A runner that ignores its context is given CancelGrace; then its task
// ends cancelled without its result, and its late result is dropped.
func TestWorkerCancelGrace(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{CancelGrace: 50 * time.Millisecond}, nil)
	tk := r.run(t, "ignore", nil)
	got, err := r.w.Cancel(context.Background(), tk.ID, "")
	if err != nil || got.Status != demiurge.TaskCancelled {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	ends := terminalEvents(t, r.db, tk.ID)
	if meta, _ := payloadOf(t, ends[0])["metadata"].(map[string]any); meta["exit_reason"] == nil {
		t.Fatalf("terminal %+v", ends)
	}
	r.gates.release(tk.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(terminalEvents(t, r.db, tk.ID)); n != 1 {
		t.Fatalf("%d terminal events", n)
	}
}

// Close refuses new tasks, cancels the active ones and waits for them.
func TestWorkerCloseDrains(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	var ids []string
	for range 5 {
		ids = append(ids, r.run(t, "wait", nil).ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		tk, _ := r.db.Task(ctx, id)
		if tk.Status != demiurge.TaskCancelled || tk.Error["message"] != controlplane.ShutdownReason {
			t.Fatalf("after close: %+v", tk)
		}
	}
	if a := r.w.Active(); len(a) != 0 {
		t.Fatalf("active after close: %v", a)
	}
	_, err := r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec}, controlplane.Source{})
	wantCode(t, err, demiurge.EUNAVAILABLE, "task admission is closed")
}

// Close bounded by a context gives up on a runner that never returns.
func TestWorkerCloseBounded(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{CancelGrace: 20 * time.Millisecond}, nil)
	tk := r.run(t, "ignore", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	wantCode(t, r.w.Close(ctx), demiurge.ETIMEOUT, "")
	if got, _ := r.db.Task(context.Background(), tk.ID); got.Status != demiurge.TaskCancelled {
		t.Fatalf("status %s", got.Status)
	}
	r.gates.release(tk.ID) // lets the cleanup's Close finish
}

func TestWorkerSubmitRules(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil)
	ctx := context.Background()
	_, err := r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindScheduleFire}, controlplane.Source{})
	wantCode(t, err, demiurge.EINVALID, "no task runner for kind: schedule.fire")

	// A repeated idempotency key returns the first task and runs nothing.
	spec := controlplane.TaskSpec{Kind: controlplane.KindTerminalExec, IdempotencyKey: "k1", Payload: map[string]any{"mode": "wait"}}
	first, err := r.w.Submit(ctx, spec, controlplane.Source{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.w.Submit(ctx, spec, controlplane.Source{})
	if err != nil || again.ID != first.ID {
		t.Fatalf("replay: %+v, %v", again, err)
	}
	if a := r.w.Active(); len(a) != 1 {
		t.Fatalf("active %v", a)
	}
	// The write scope is exclusive among active tasks.
	src := controlplane.Source{WriteScope: "terminal:/work"}
	held := r.run(t, "wait", map[string]any{})
	_ = held
	one, err := r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec, Payload: map[string]any{"mode": "wait"}}, src)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec, Payload: map[string]any{"mode": "ok"}}, src)
	wantCode(t, err, demiurge.ECONFLICT, "background task write_scope is already active: terminal:/work")
	r.gates.release(one.ID)
	r.wait(t, one.ID)
	if _, err := r.w.Submit(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec, Payload: map[string]any{"mode": "ok"}}, src); err != nil {
		t.Fatalf("scope free again: %v", err)
	}

	unstarted := controlplane.NewWorker(r.cp, r.db, controlplane.WorkerOptions{HostID: "host_x"})
	_, err = unstarted.Submit(ctx, spec, controlplane.Source{})
	wantCode(t, err, demiurge.EINVALID, "task worker is not started")
	wantCode(t, controlplane.NewWorker(r.cp, r.db, controlplane.WorkerOptions{}).Start(ctx), demiurge.EINVALID, "task worker needs a host id")
}

// Log lines go through the handle's buffer into the bounded log: the tail
// ends with the newest line and the rows stay within MaxLogLines.
func TestWorkerLogsAreBounded(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{MaxLogLines: 100}, nil)
	tk := r.wait(t, r.run(t, "log", map[string]any{"lines": 5000}).ID)
	tail, err := r.cp.LogTail(context.Background(), tk.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != 100 || tail[99].Text != "line 4999" || tail[0].Text != "line 4900" {
		t.Fatalf("tail: %d lines, first %+v last %+v", len(tail), tail[0], tail[len(tail)-1])
	}
	rows, _ := r.db.Query(context.Background(), storeQuery("task_logs", tk.ID))
	if len(rows) != 100 {
		t.Fatalf("%d rows persisted", len(rows))
	}
	if n := len(events(t, r.db, demiurge.AggTask, tk.ID, demiurge.EvTaskLog)); n != 0 {
		t.Fatalf("%d task.log events", n)
	}
}

// A runner that ends blocked on the user leaves the task
// blocked_needs_user, announces it like an ended task, and a later cancel
// ends it.
func TestWorkerBlockedResultStaysBlocked(t *testing.T) {
	rec := newRecorder()
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, rec.fn)
	tk := r.run(t, "needs-user", nil)
	c := rec.next(t)
	if c.TaskID != tk.ID || c.Task.Status != demiurge.TaskBlocked || c.Summary != "needs the user" {
		t.Fatalf("completion = %+v", c)
	}
	got, err := r.db.Task(context.Background(), tk.ID)
	if err != nil || got.Status != demiurge.TaskBlocked {
		t.Fatalf("task = %+v, %v; want blocked_needs_user", got, err)
	}
	if len(r.w.Active()) != 0 {
		t.Fatalf("a blocked task is still active: %v", r.w.Active())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done, err := r.w.Cancel(ctx, tk.ID, "")
	if err != nil || done.Status != demiurge.TaskCancelled {
		t.Fatalf("cancel = %+v, %v", done, err)
	}
}
