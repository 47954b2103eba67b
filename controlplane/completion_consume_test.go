package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

// A waiter that takes the result consumes the completion: the handler is
// never called for it, and the work item ends acknowledged.
func TestWaitConsumeSuppressesDelivery(t *testing.T) {
	rc := newRecorder()
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, rc.fn)
	tk := r.run(t, "wait", nil)
	type res struct {
		tk       demiurge.Task
		consumed bool
		err      error
	}
	got := make(chan res, 1)
	go func() {
		tk, consumed, err := r.w.WaitConsume(context.Background(), tk.ID)
		got <- res{tk, consumed, err}
	}()
	// The hold is registered as WaitConsume starts: release the task only
	// once it is, so the completion is the waiter's to consume.
	for deadline := time.Now().Add(time.Minute); !r.w.Held(tk.ID); {
		if time.Now().After(deadline) {
			t.Fatal("WaitConsume never registered its hold")
		}
		time.Sleep(time.Millisecond)
	}
	r.gates.release(tk.ID)
	out := <-got
	if out.err != nil || !out.consumed || out.tk.Status != demiurge.TaskSucceeded {
		t.Fatalf("wait consume: %+v", out)
	}
	rows := completions(t, r.db, tk.ID)
	if len(rows) != 1 || rows[0]["status"] != demiurge.WorkAcknowledged || rows[0]["owner_id"] != "host.task_worker.wait" {
		t.Fatalf("completion %v", rows)
	}
	// A later task is still delivered: the loop is not stuck.
	next := r.run(t, "ok", nil)
	if c := rc.next(t); c.TaskID != next.ID {
		t.Fatalf("delivered %s, want %s (the consumed task must not be delivered)", c.TaskID, next.ID)
	}
}

// ConsumeCompletion acknowledges a pending completion once; tasks without
// one are left alone.
func TestConsumeCompletion(t *testing.T) {
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, nil) // no handler: completions stay pending
	ctx := context.Background()
	done := r.wait(t, r.run(t, "ok", nil).ID)
	for range 2 {
		if err := r.w.ConsumeCompletion(ctx, done.ID); err != nil {
			t.Fatal(err)
		}
	}
	rows := completions(t, r.db, done.ID)
	if len(rows) != 1 || rows[0]["status"] != demiurge.WorkAcknowledged {
		t.Fatalf("completion %v", rows)
	}
	silent := r.wait(t, r.run(t, "ok", map[string]any{"notify_policy": "silent"}).ID)
	running := r.run(t, "wait", nil)
	for _, id := range []string{silent.ID, running.ID} {
		if err := r.w.ConsumeCompletion(ctx, id); err != nil {
			t.Fatal(err)
		}
		if n := len(completions(t, r.db, id)); n != 0 {
			t.Fatalf("task %s: %d completions", id, n)
		}
	}
	err := r.w.ConsumeCompletion(ctx, "task_missing")
	wantCode(t, err, demiurge.ENOTFOUND, "task not found: task_missing")
}

// A consuming wait that times out does not swallow the completion: once
// the task ends, it is delivered as usual.
func TestWaitConsumeTimeoutStillDelivers(t *testing.T) {
	rc := newRecorder()
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, rc.fn)
	tk := r.run(t, "wait", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, consumed, err := r.w.WaitConsume(ctx, tk.ID)
	wantCode(t, err, demiurge.ETIMEOUT, "")
	if consumed {
		t.Fatal("consumed after a timeout")
	}
	r.gates.release(tk.ID)
	if c := rc.next(t); c.TaskID != tk.ID {
		t.Fatalf("delivered %s", c.TaskID)
	}
}
