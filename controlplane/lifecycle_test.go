package controlplane_test

import (
	"context"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

type step func(cp *controlplane.ControlPlane, id string) (demiurge.Task, error)

var (
	start step = func(cp *controlplane.ControlPlane, id string) (demiurge.Task, error) {
		return cp.MarkStarted(context.Background(), id)
	}
	succeed step = func(cp *controlplane.ControlPlane, id string) (demiurge.Task, error) {
		return cp.Succeed(context.Background(), id, "ref://out", "all done", map[string]any{"n": 1})
	}
	fail step = func(cp *controlplane.ControlPlane, id string) (demiurge.Task, error) {
		return cp.Fail(context.Background(), id, "boom")
	}
	cancel step = func(cp *controlplane.ControlPlane, id string) (demiurge.Task, error) {
		return cp.Cancel(context.Background(), id, "")
	}
	block step = func(cp *controlplane.ControlPlane, id string) (demiurge.Task, error) {
		return cp.Block(context.Background(), id, "need input")
	}
)

// Each case drives a fresh task through path; the last step is checked.
func TestTransitionsOnStore(t *testing.T) {
	cp, db := newCP(t)
	cases := []struct {
		name   string
		path   []step
		want   string // status after the last step
		refuse bool   // the last step is refused with ECONFLICT
	}{
		{"start", []step{start}, demiurge.TaskRunning, false},
		{"succeed running", []step{start, succeed}, demiurge.TaskSucceeded, false},
		{"fail running", []step{start, fail}, demiurge.TaskFailed, false},
		{"cancel running", []step{start, cancel}, demiurge.TaskCancelled, false},
		{"block running", []step{start, block}, demiurge.TaskBlocked, false},
		{"succeed blocked", []step{start, block, succeed}, demiurge.TaskSucceeded, false},
		{"fail blocked", []step{start, block, fail}, demiurge.TaskFailed, false},
		{"cancel blocked", []step{start, block, cancel}, demiurge.TaskCancelled, false},
		{"cancel queued", []step{cancel}, demiurge.TaskCancelled, false},
		{"succeed queued", []step{succeed}, demiurge.TaskQueued, true},
		{"fail queued", []step{fail}, demiurge.TaskQueued, true},
		{"block queued", []step{block}, demiurge.TaskQueued, true},
		{"start running", []step{start, start}, demiurge.TaskRunning, true},
		{"block blocked", []step{start, block, block}, demiurge.TaskBlocked, true},
		{"start blocked", []step{start, block, start}, demiurge.TaskBlocked, true},
		{"succeed after fail", []step{start, fail, succeed}, demiurge.TaskFailed, true},
		{"start after cancel", []step{cancel, start}, demiurge.TaskCancelled, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := submit(t, cp, demiurge.TaskKindTerminalExec, demiurge.TaskOrigin{Actor: "test"}).ID
			for _, s := range c.path[:len(c.path)-1] {
				if _, err := s(cp, id); err != nil {
					t.Fatal(err)
				}
			}
			before := countEvents(t, db, id, "")
			tk, err := c.path[len(c.path)-1](cp, id)
			if c.refuse {
				wantCode(t, err, demiurge.ECONFLICT, "")
				if n := countEvents(t, db, id, ""); n != before {
					t.Fatalf("refused move wrote %d events", n-before)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			got, _ := db.Task(context.Background(), id)
			if got.Status != c.want || (!c.refuse && tk.Status != c.want) {
				t.Fatalf("status row %q returned %q, want %q", got.Status, tk.Status, c.want)
			}
		})
	}
}

func TestSucceedRecordsResultAndSummary(t *testing.T) {
	cp, _ := newCP(t)
	ctx := context.Background()
	id := submit(t, cp, demiurge.TaskKindEvolverRun, demiurge.TaskOrigin{}).ID
	start(cp, id)
	tk, err := succeed(cp, id)
	if err != nil || tk.ResultRef != "ref://out" || tk.CompletedAt.IsZero() || tk.StartedAt.IsZero() {
		t.Fatalf("succeed = %+v, %v", tk, err)
	}
	v, err := cp.Operator(ctx, id)
	if err != nil || v.Summary != "all done" {
		t.Fatalf("operator = %+v, %v", v, err)
	}
}

// Cancel of a terminal task returns it unchanged and writes nothing.
func TestCancelTerminalIsSticky(t *testing.T) {
	cp, db := newCP(t)
	id := submit(t, cp, demiurge.TaskKindAgentSpawn, demiurge.TaskOrigin{}).ID
	start(cp, id)
	if _, err := fail(cp, id); err != nil {
		t.Fatal(err)
	}
	before := countEvents(t, db, id, "")
	tk, err := cancel(cp, id)
	if err != nil || tk.Status != demiurge.TaskFailed {
		t.Fatalf("cancel terminal = %q, %v", tk.Status, err)
	}
	if countEvents(t, db, id, "") != before {
		t.Fatal("cancel of a terminal task wrote an event")
	}
	if tk.Error["message"] != "boom" {
		t.Fatalf("error kept %v", tk.Error)
	}
}

func TestTransitionMissingTask(t *testing.T) {
	cp, _ := newCP(t)
	_, err := cp.MarkStarted(context.Background(), "task_missing")
	wantCode(t, err, demiurge.ENOTFOUND, "task not found: task_missing")
}

// Two writers race to end one task: exactly one terminal event is written,
// also while log lines move the aggregate.
func TestConcurrentTerminalTransitions(t *testing.T) {
	cp, db := newCP(t)
	ctx := context.Background()
	for i := range 10 {
		id := submit(t, cp, demiurge.TaskKindTerminalExec, demiurge.TaskOrigin{}).ID
		start(cp, id)
		var wg sync.WaitGroup
		var succErr, cancErr error
		wg.Add(3)
		go func() { defer wg.Done(); _, succErr = succeed(cp, id) }()
		go func() { defer wg.Done(); _, cancErr = cancel(cp, id) }()
		go func() { defer wg.Done(); _ = cp.AppendLog(ctx, id, "noise\nmore", "stdout") }()
		wg.Wait()
		terminal := countEvents(t, db, id, demiurge.EvTaskSucceeded) + countEvents(t, db, id, demiurge.EvTaskCancelled)
		if terminal != 1 {
			t.Fatalf("round %d: %d terminal events", i, terminal)
		}
		tk, _ := db.Task(ctx, id)
		switch tk.Status {
		case demiurge.TaskSucceeded: // cancel saw a terminal task: unchanged, no error
			if cancErr != nil || succErr != nil {
				t.Fatalf("round %d: succeed %v cancel %v", i, succErr, cancErr)
			}
		case demiurge.TaskCancelled: // succeed was refused
			if cancErr != nil || demiurge.ErrorCode(succErr) != demiurge.ECONFLICT {
				t.Fatalf("round %d: succeed %v cancel %v", i, succErr, cancErr)
			}
		default:
			t.Fatalf("round %d: status %s", i, tk.Status)
		}
	}
}
