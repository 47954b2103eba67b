package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/host"
)

// A Host opened for one command runs what is queued for it, but leaves a
// task queued for any Host to the Hosts that stay: were it to take one,
// the end of the command would cancel it. A Host that stays then runs it.
func TestOneShotHostLeavesTheSharedQueue(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	// A trivial body stands in for the terminal, as in the fleet tests.
	const kind = demiurge.TaskKindTerminalExec
	runners := map[string]controlplane.Runner{kind: func(context.Context, demiurge.Task, *controlplane.Handle) (demiurge.TaskResult, error) {
		return demiurge.TaskResult{Summary: "done"}, nil
	}}
	getenv := func(string) string { return "" }
	once, err := host.Open(ctx, host.Options{Home: home, Getenv: getenv, TaskRunners: runners, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	// Queued before the own task: a worker that shared the queue would
	// claim it first, oldest first, in the same claim.
	shared, err := once.EnqueueTask(ctx, demiurge.TaskSpec{Kind: kind, Payload: map[string]any{"command": "true"}}, demiurge.TaskOrigin{Actor: "test"}, true)
	if err != nil {
		t.Fatal(err)
	}
	own, err := once.EnqueueTask(ctx, demiurge.TaskSpec{Kind: kind, Payload: map[string]any{"command": "true"}}, demiurge.TaskOrigin{Actor: "test"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if tk := waitTask(t, once, own.ID, 30*time.Second); tk.Status != demiurge.TaskSucceeded {
		t.Fatalf("own task ended %s, want succeeded", tk.Status)
	}
	if tk, err := host.StoreOf(once).Task(ctx, shared.ID); err != nil || tk.Status != demiurge.TaskQueued {
		t.Fatalf("task queued for any Host is %s (%v) on a one-shot Host, want still queued", tk.Status, err)
	}
	if err := once.Close(ctx); err != nil {
		t.Fatal(err)
	}

	stays, err := host.Open(ctx, host.Options{Home: home, Getenv: getenv, TaskRunners: runners})
	if err != nil {
		t.Fatal(err)
	}
	defer stays.Close(ctx)
	if tk := waitTask(t, stays, shared.ID, 30*time.Second); tk.Status != demiurge.TaskSucceeded {
		t.Fatalf("shared task ended %s on a Host that stays, want succeeded", tk.Status)
	}
}
