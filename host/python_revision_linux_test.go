package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// A new core revision gets a new worker: a local edit of a module.py slot
// (saved as a revision when the next turn loads the core) and a rollback
// each run the code of their revision in a fresh interpreter, and the
// worker of the old revision is stopped.
func TestPythonWorkerIsReplacedWithTheRevision(t *testing.T) {
	needPython(t)
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	core := filepath.Join(home, "agents", "assistant")
	if err := os.Remove(filepath.Join(core, "agent/output/base_output/module.star")); err != nil {
		t.Fatal(err)
	}
	slot := filepath.Join(core, "agent/output/base_output/module.py")
	// The token lives as long as the interpreter (modules run afresh on
	// every call): it names the worker.
	source := func(label string) string {
		return "import builtins, os\n\ndef process(ctx):\n" +
			"    token = builtins.__dict__.setdefault('_worker_token', os.urandom(8).hex())\n" +
			"    ctx.output.send_text('" + label + " worker=' + token)\n"
	}
	writeFile(t, slot, source("v1"))
	h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t,
		demiurge.ModelResponse{Content: "one"}, demiurge.ModelResponse{Content: "two"},
		demiurge.ModelResponse{Content: "three"}, demiurge.ModelResponse{Content: "four"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	run := func(want string) string {
		t.Helper()
		res, err := h.Run(ctx, turn.Request{Text: "hello"})
		if err != nil || res.Outcome != turn.OutcomeCompleted || len(res.Deliveries) == 0 {
			t.Fatalf("turn: %v %+v", err, res)
		}
		got := res.Deliveries[len(res.Deliveries)-1].Text
		label, token, ok := strings.Cut(got, " worker=")
		if !ok || token == "" || label != want {
			t.Fatalf("delivered %q, want %s and a worker token", got, want)
		}
		return token
	}
	first := run("v1")
	if again := run("v1"); again != first {
		t.Fatalf("the same revision started a second worker: %s, then %s", first, again)
	}

	waitWorkers(t, home, 1)

	writeFile(t, slot, source("v2"))
	edited := run("v2")
	if edited == first {
		t.Fatal("the edited revision ran in the old worker")
	}
	waitWorkers(t, home, 1)

	if _, err := h.Rollback(ctx, "", "back to v1"); err != nil {
		t.Fatal(err)
	}
	rolledBack := run("v1")
	if rolledBack == edited || rolledBack == first {
		t.Fatalf("the rolled-back revision ran in an earlier worker: %s (v1 %s, v2 %s)", rolledBack, first, edited)
	}
	waitWorkers(t, home, 1)
}

// waitWorkers waits until exactly n Python workers of the home run: the
// processes whose HOME is one of its worker scratch directories.
func waitWorkers(t *testing.T, home string, n int) {
	t.Helper()
	prefix := "HOME=" + home + ".private/python-home/"
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue
			}
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if !strings.Contains(string(cmd), "python") {
				continue
			}
			for _, kv := range strings.Split(string(env), "\x00") {
				if strings.HasPrefix(kv, prefix) {
					got++
					break
				}
			}
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Python workers of the home run, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An evolve promotion is a new revision too: the promoted module.py runs
// in a fresh worker and the worker of the replaced revision stops.
func TestPythonWorkerIsReplacedOnPromotion(t *testing.T) {
	needPython(t)
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	core := filepath.Join(home, "agents", "assistant")
	if err := os.Remove(filepath.Join(core, "agent/output/base_output/module.star")); err != nil {
		t.Fatal(err)
	}
	source := func(label string) string {
		return "import builtins, os\n\ndef process(ctx):\n" +
			"    token = builtins.__dict__.setdefault('_worker_token', os.urandom(8).hex())\n" +
			"    ctx.output.send_text('" + label + " worker=' + token)\n"
	}
	writeFile(t, filepath.Join(core, "agent/output/base_output/module.py"), source("live"))
	h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t,
		demiurge.ModelResponse{Content: "one"},
		demiurge.ModelResponse{ToolCalls: []demiurge.ToolCall{{ID: "w1", Name: "write_file", Arguments: map[string]any{
			"path": "assistant/agent/output/base_output/module.py", "content": source("promoted")}}}},
		demiurge.ModelResponse{Content: "rewrote the output slot"},
		demiurge.ModelResponse{Content: "two"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	run := func(want string) string {
		t.Helper()
		res, err := h.Run(ctx, turn.Request{Text: "hello"})
		if err != nil || res.Outcome != turn.OutcomeCompleted || len(res.Deliveries) == 0 {
			t.Fatalf("turn: %v %+v", err, res)
		}
		label, token, ok := strings.Cut(res.Deliveries[len(res.Deliveries)-1].Text, " worker=")
		if !ok || token == "" || label != want {
			t.Fatalf("delivered %q, want %s and a worker token", res.Deliveries[len(res.Deliveries)-1].Text, want)
		}
		return token
	}
	before := run("live")
	waitWorkers(t, home, 1)

	start, err := h.EvolveStart(ctx, "assistant", "rewrite the output slot", host.EvolveStartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := h.EvolveReview(ctx, start.RunID, "test")
	if err != nil || !rv.Passed {
		t.Fatalf("review: %v %+v", err, rv)
	}
	if _, err := h.EvolvePromote(ctx, start.RunID, corerepo.PromoteOptions{Token: rv.ReviewToken}); err != nil {
		t.Fatal(err)
	}
	if after := run("promoted"); after == before {
		t.Fatal("the promoted revision ran in the old worker")
	}
	waitWorkers(t, home, 1)
}
