package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
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

// A Host closed for the process's exit leaves its turn complete and its
// lease released for the next Host, which opens beside the connections
// the first one left to the exit.
func TestExitAfterCloseKeepsTheTurn(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	getenv := func(string) string { return "" }
	first, err := host.Open(ctx, host.Options{Home: home, Getenv: getenv, OneShot: true, ExitAfterClose: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := first.Run(ctx, turn.Request{Text: "hello"})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := host.Open(ctx, host.Options{Home: home, Getenv: getenv, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(ctx)
	tr, err := next.Turn(ctx, res.TurnID)
	if err != nil || tr.Status != demiurge.TurnCompleted {
		t.Fatalf("turn after reopening: %+v, %v", tr, err)
	}
	// The session's lease was released: the next turn of the session runs.
	again, err := next.Run(ctx, turn.Request{Text: "hello", SessionID: res.SessionID})
	if err != nil || again.Outcome != turn.OutcomeCompleted {
		t.Fatalf("next turn: %+v, %v", again, err)
	}
}
