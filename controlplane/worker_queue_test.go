package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// enqueue queues a terminal.exec task in mode through r's worker; host ""
// queues it for any Host.
func (r *rig) enqueue(t *testing.T, mode, host string) demiurge.Task {
	t.Helper()
	tk, err := r.w.Enqueue(context.Background(), demiurge.TaskSpec{Kind: demiurge.TaskKindTerminalExec,
		Payload: map[string]any{"mode": mode}}, demiurge.TaskOrigin{Actor: "test", HostID: host})
	if err != nil {
		t.Fatalf("enqueue %s: %v", mode, err)
	}
	if tk.Status != demiurge.TaskQueued {
		t.Fatalf("enqueued task is %s, want queued", tk.Status)
	}
	return tk
}

// waitStatus polls the store until task id has status, or fails.
func waitStatus(t *testing.T, r *rig, id, status string, within time.Duration) demiurge.Task {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		tk, err := r.db.Task(context.Background(), id)
		if err == nil && tk.Status == status {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %s (%v) after %s, want %s", id, tk.Status, err, within, status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Tasks queued for any Host are run by the workers of two Hosts on one
// ledger, each exactly once, with the payload they were queued with.
func TestWorkerQueueSharedByHosts(t *testing.T) {
	path := dbPath(t)
	opts := controlplane.WorkerOptions{QueuePoll: 20 * time.Millisecond}
	a, b := newRig(t, path, opts, nil), newRig(t, path, opts, nil)
	const n = 60
	ids := make([]string, n)
	for i := range n {
		ids[i] = []*rig{a, b}[i%2].enqueue(t, "ok", "").ID
	}
	ran := map[string]int{}
	for _, id := range ids {
		tk := waitStatus(t, a, id, demiurge.TaskSucceeded, 20*time.Second)
		if tk.Source["actor"] != "test" {
			t.Fatalf("task %s lost its source: %+v", id, tk.Source)
		}
		ran[tk.HostID]++
		if s := events(t, a.db, demiurge.AggTask, id, demiurge.EvTaskStarted); len(s) != 1 {
			t.Fatalf("task %s started %d times", id, len(s))
		}
		if e := terminalEvents(t, a.db, id); len(e) != 1 || e[0].Type != demiurge.EvTaskSucceeded {
			t.Fatalf("task %s terminal events %v", id, e)
		}
	}
	if ran[a.host.ID()]+ran[b.host.ID()] != n {
		t.Fatalf("ran by %v, want every task by host a or b", ran)
	}
}

// A task queued for one Host is left to it.
func TestWorkerQueuePinnedToHost(t *testing.T) {
	path := dbPath(t)
	opts := controlplane.WorkerOptions{QueuePoll: 20 * time.Millisecond}
	a, b := newRig(t, path, opts, nil), newRig(t, path, opts, nil)
	for range 10 {
		tk := a.enqueue(t, "ok", b.host.ID())
		if got := waitStatus(t, a, tk.ID, demiurge.TaskSucceeded, 20*time.Second); got.HostID != b.host.ID() {
			t.Fatalf("task for host b ran on %s", got.HostID)
		}
	}
}

// Past MaxActive, Submit queues the task; it starts when room frees up.
// A terminal command stays on the Host it was asked on.
func TestWorkerMaxActiveQueues(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{MaxActive: 1, QueuePoll: time.Hour}, nil)
	first := r.run(t, "wait", nil)
	if first.Status != demiurge.TaskRunning {
		t.Fatalf("first task %s", first.Status)
	}
	second := r.run(t, "ok", nil)
	if second.Status != demiurge.TaskQueued || second.HostID != r.host.ID() {
		t.Fatalf("second task %s on %q, want queued for this Host", second.Status, second.HostID)
	}
	time.Sleep(50 * time.Millisecond)
	if tk, _ := r.db.Task(context.Background(), second.ID); tk.Status != demiurge.TaskQueued {
		t.Fatalf("second task %s while the first runs", tk.Status)
	}
	r.gates.release(first.ID)
	// The first run's end frees the room: no poll is needed (QueuePoll is an hour).
	waitStatus(t, r, second.ID, demiurge.TaskSucceeded, 10*time.Second)
}

// Cancelling a queued task before any Host starts it ends it cancelled,
// and no worker runs it afterwards.
func TestWorkerQueueCancelBeforeStart(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{MaxActive: 1, QueuePoll: 20 * time.Millisecond}, nil)
	busy := r.run(t, "wait", nil)
	queued := r.enqueue(t, "ok", "")
	got, err := r.w.Cancel(context.Background(), queued.ID, "changed my mind")
	if err != nil || got.Status != demiurge.TaskCancelled {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	r.gates.release(busy.ID)
	r.wait(t, busy.ID)
	time.Sleep(100 * time.Millisecond)
	if s := events(t, r.db, demiurge.AggTask, queued.ID, demiurge.EvTaskStarted); len(s) != 0 {
		t.Fatalf("a cancelled queued task was started: %v", s)
	}
}

// On PostgreSQL a Host is woken by another Host's commit (LISTEN/NOTIFY):
// with polling off, a task queued by one Host starts on the other at once,
// and a cancel request reaches the Host that runs the task.
func TestWorkerQueueWakeUpAcrossHosts(t *testing.T) {
	where := demiurgetest.PostgresDatabase(t)
	var rigs []*rig
	for range 2 {
		opts := controlplane.WorkerOptions{QueuePoll: time.Hour, CancelPoll: time.Hour}
		rigs = append(rigs, newRigWith(t, where, opts, func(o *controlplane.WorkerOptions, r *rig) { o.Subscribe = r.db.Subscribe }))
	}
	a, b := rigs[0], rigs[1]
	time.Sleep(200 * time.Millisecond) // both listeners connected
	tk := a.enqueue(t, "wait", b.host.ID())
	running := waitStatus(t, a, tk.ID, demiurge.TaskRunning, 5*time.Second)
	if running.HostID != b.host.ID() {
		t.Fatalf("running on %s", running.HostID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := a.w.Cancel(ctx, tk.ID, "stop it")
	if err != nil || got.Status != demiurge.TaskCancelled {
		t.Fatalf("cancel across hosts: %+v, %v", got, err)
	}
	for range 5 {
		id := b.enqueue(t, "ok", "").ID
		waitStatus(t, b, id, demiurge.TaskSucceeded, 5*time.Second)
	}
}

// EnqueueMany queues many tasks in one write; each runs once. A spec that
// repeats an earlier submission's key gets the earlier task; an unknown
// kind fails alone; a write scope is refused.
func TestWorkerEnqueueMany(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{QueuePoll: 20 * time.Millisecond}, nil)
	ctx := context.Background()
	first := r.enqueue(t, "ok", "")
	specs := []demiurge.TaskSpec{
		{Kind: demiurge.TaskKindTerminalExec, Payload: map[string]any{"mode": "ok"}},
		{Kind: "no.such.kind"},
		{Kind: demiurge.TaskKindTerminalExec, Payload: map[string]any{"mode": "ok", "task_id": first.ID}},
		{Kind: demiurge.TaskKindTerminalExec, Payload: map[string]any{"mode": "ok"}},
	}
	tasks, errs, err := r.w.EnqueueMany(ctx, specs, demiurge.TaskOrigin{Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || errs[3] != nil || tasks[0].ID == "" || tasks[3].ID == "" || tasks[0].ID == tasks[3].ID {
		t.Fatalf("tasks %+v errors %v", tasks, errs)
	}
	wantCode(t, errs[1], demiurge.EINVALID, "unsupported task kind: no.such.kind")
	if errs[2] != nil || tasks[2].ID != first.ID {
		t.Fatalf("a replay of %s: %+v, %v", first.ID, tasks[2], errs[2])
	}
	for _, id := range []string{first.ID, tasks[0].ID, tasks[3].ID} {
		waitStatus(t, r, id, demiurge.TaskSucceeded, 10*time.Second)
		if s := events(t, r.db, demiurge.AggTask, id, demiurge.EvTaskStarted); len(s) != 1 {
			t.Fatalf("task %s started %d times", id, len(s))
		}
	}
	_, _, err = r.w.EnqueueMany(ctx, specs[:1], demiurge.TaskOrigin{WriteScope: "repo/x"})
	wantCode(t, err, demiurge.EINVALID, "")
}
