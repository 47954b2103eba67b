package controlplane_test

import (
	"context"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

func TestSubmitKinds(t *testing.T) {
	cp, _ := newCP(t)
	ctx := context.Background()
	for _, k := range []string{"agent.spawn", "terminal.exec", "evolver.run", "schedule.fire"} {
		tk := submit(t, cp, k, controlplane.Source{})
		if tk.Kind != k || tk.Status != demiurge.TaskQueued || demiurge.IDPrefix(tk.ID) != "task" {
			t.Fatalf("submit %s = %+v", k, tk)
		}
	}
	for _, k := range []string{"", "shell", "delivery.send"} {
		_, err := cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: k}, controlplane.Source{})
		wantCode(t, err, demiurge.EINVALID, "unsupported task kind: "+k)
	}
}

func TestSubmitProjection(t *testing.T) {
	cp, db := newCP(t)
	ctx := context.Background()
	src := controlplane.Source{Actor: "model", SessionID: "session_1", TurnID: "turn_1", CoreID: "core_a",
		HostID: "host_1", Metadata: map[string]any{"tool": "delegate_task"}}
	top, err := cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindAgentSpawn,
		Payload: map[string]any{"task_id": "task_top", "notify_policy": "silent", "prompt": "hi"}}, src)
	if err != nil {
		t.Fatal(err)
	}
	if top.ID != "task_top" || top.ParentTaskID != "" || top.RootTaskID != "task_top" || top.OwnerSessionID != "session_1" ||
		top.OwnerTurnID != "turn_1" || top.CoreID != "core_a" || top.HostID != "host_1" || top.NotifyPolicy != "silent" ||
		top.Source["actor"] != "model" || top.Source["metadata"].(map[string]any)["tool"] != "delegate_task" {
		t.Fatalf("top-level task %+v", top)
	}
	// A source task equal to the task itself is no parent.
	self := src
	self.TaskID = "task_self"
	tk, err := cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec, Payload: map[string]any{"task_id": "task_self"}}, self)
	if err != nil || tk.ParentTaskID != "" || tk.RootTaskID != "task_self" {
		t.Fatalf("self-sourced task %+v, %v", tk, err)
	}
	child := src
	child.TaskID = "task_top"
	tk, err = cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec}, child)
	if err != nil || tk.ParentTaskID != "task_top" || tk.RootTaskID != "task_top" {
		t.Fatalf("child task %+v, %v", tk, err)
	}
	evs, _ := db.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggTask, AggregateID: "task_top"})
	if len(evs) != 1 || evs[0].IdempotencyKey != "task:task_top:submitted" || payloadOf(t, evs[0])["action"].(map[string]any)["prompt"] != "hi" {
		t.Fatalf("submitted event %+v", evs)
	}
}

func TestSubmitIdempotent(t *testing.T) {
	cp, db := newCP(t)
	ctx := context.Background()
	spec := controlplane.TaskSpec{Kind: controlplane.KindTerminalExec, IdempotencyKey: "req-1"}
	src := controlplane.Source{WriteScope: "repo/a"}
	a, err := cp.SubmitTask(ctx, spec, src)
	if err != nil {
		t.Fatal(err)
	}
	// Same key, even while the first holds the scope: the same task back.
	b, err := cp.SubmitTask(ctx, spec, src)
	if err != nil || b.ID != a.ID {
		t.Fatalf("resubmit = %s, %v; want %s", b.ID, err, a.ID)
	}
	// Explicit id, default key.
	spec2 := controlplane.TaskSpec{Kind: controlplane.KindEvolverRun, Payload: map[string]any{"task_id": "task_fixed"}}
	for range 2 {
		tk, err := cp.SubmitTask(ctx, spec2, controlplane.Source{})
		if err != nil || tk.ID != "task_fixed" {
			t.Fatalf("resubmit fixed = %+v, %v", tk, err)
		}
	}
	if n := countEvents(t, db, "task_fixed", demiurge.EvTaskSubmitted); n != 1 {
		t.Fatalf("%d submitted events", n)
	}
	// The same id under another key is refused, not overwritten.
	start(cp, "task_fixed")
	spec2.IdempotencyKey = "other"
	_, err = cp.SubmitTask(ctx, spec2, controlplane.Source{})
	wantCode(t, err, demiurge.ECONFLICT, "task already exists: task_fixed")
	if tk, _ := db.Task(ctx, "task_fixed"); tk.Status != demiurge.TaskRunning {
		t.Fatalf("existing task overwritten: %s", tk.Status)
	}
}

func TestWriteScopeConflict(t *testing.T) {
	cp, _ := newCP(t)
	ctx := context.Background()
	scoped := controlplane.Source{WriteScope: "repo/x"}
	first := submit(t, cp, controlplane.KindTerminalExec, scoped)
	other := submit(t, cp, controlplane.KindTerminalExec, controlplane.Source{WriteScope: "repo/y"})
	submit(t, cp, controlplane.KindTerminalExec, controlplane.Source{}) // no scope: never conflicts
	submit(t, cp, controlplane.KindTerminalExec, controlplane.Source{})
	for _, moveTo := range []step{start, block} { // queued, running, blocked all hold the scope
		_, err := cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindAgentSpawn}, scoped)
		wantCode(t, err, demiurge.ECONFLICT, "background task write_scope is already active: repo/x")
		if _, err := moveTo(cp, first.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, err := cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindAgentSpawn}, scoped)
	wantCode(t, err, demiurge.ECONFLICT, "background task write_scope is already active: repo/x")
	if _, err := succeed(cp, first.ID); err != nil {
		t.Fatal(err)
	}
	next := submit(t, cp, controlplane.KindAgentSpawn, scoped) // freed by the terminal status
	if next.Source["write_scope"] != "repo/x" || other.Source["write_scope"] != "repo/y" {
		t.Fatalf("write_scope not kept: %v %v", next.Source, other.Source)
	}
}

// Concurrent submissions of one scope: exactly one wins.
func TestWriteScopeConcurrent(t *testing.T) {
	cp, db := newCP(t)
	ctx := context.Background()
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = cp.SubmitTask(ctx, controlplane.TaskSpec{Kind: controlplane.KindTerminalExec}, controlplane.Source{WriteScope: "repo/z"})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			wantCode(t, err, demiurge.ECONFLICT, "background task write_scope is already active: repo/z")
		}
	}
	tasks, _ := db.ListTasks(ctx, demiurge.TaskFilter{})
	if ok != 1 || len(tasks) != 1 {
		t.Fatalf("%d submissions succeeded, %d tasks", ok, len(tasks))
	}
}
