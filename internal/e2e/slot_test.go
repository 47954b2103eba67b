package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func (e *env) writeCoreFile(rel, content string) {
	e.t.Helper()
	if r := e.run("", "init"); r.code != 0 {
		e.t.Fatalf("init: %s", r.stderr)
	}
	if err := os.WriteFile(filepath.Join(e.home, "agents", "assistant", rel), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func TestHardSlotFailureFailsTurnWithPosition(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/output/base_output/module.star", "def process(ctx):\n    x = 1\n    fail(\"output exploded\")\n")
	out, r := e.runJSON("hi")
	if r.code != 1 || out.Outcome != "failed" || out.Error == nil {
		t.Fatalf("exit %d %+v", r.code, out)
	}
	if !strings.Contains(out.Error.Message, "module.star:3") || !strings.Contains(out.Error.Message, "output exploded") {
		t.Fatalf("error %q should name module.star:3 and the message", out.Error.Message)
	}
	// The failed turn released the session: the next turn runs.
	e.writeCoreFile("agent/output/base_output/module.star", "def process(ctx):\n    ctx.output.send_text(ctx.output.response_text)\n")
	next, r := e.runJSON("again")
	if r.code != 0 || next.Outcome != "completed" || next.SessionID != out.SessionID {
		t.Fatalf("next turn: exit %d %+v", r.code, next)
	}
}

func TestSoftSlotFailureIsSkipped(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/bootstrap/session_context/module.star", "def process(ctx):\n    fail(\"bootstrap trouble\")\n")
	out, r := e.runJSON("hi")
	if r.code != 0 || out.Outcome != "completed" || out.Text != "[fake] hi" {
		t.Fatalf("soft failure should not fail the turn: exit %d %+v %s", r.code, out, r.stderr)
	}
}

func TestStarlarkBudgetStopsRunawaySlot(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/input/base_input/module.star", "def process(ctx):\n    n = 0\n    for i in range(100000000):\n        n += i\n    ctx.input.add_context(ctx.input.raw_text, role = \"user\")\n")
	out, r := e.runJSON("hi")
	if r.code != 1 || out.Outcome != "failed" || out.Error == nil || !strings.Contains(out.Error.Message, "base_input") {
		t.Fatalf("exit %d %+v", r.code, out)
	}
}

func TestParallelOutputSlotCannotChangeHistory(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/pipelines.yaml", "schema_version: 1\nbootstrap:\n  serial: [session_context]\ninput:\n  serial: [base_input]\noutput:\n  serial: [base_output]\n  parallel: [side]\n")
	dir := filepath.Join(e.home, "agents", "assistant", "agent", "output", "side")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "slot.yaml"), []byte("failure_policy: soft\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "module.star"), []byte("def process(ctx):\n    ctx.output.send_text(\"side note\", write_history = True)\n"), 0o600)
	out, r := e.runJSON("hi")
	if r.code != 0 || out.Outcome != "completed" {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	for _, d := range out.Deliveries {
		if d.Text == "side note" {
			t.Fatal("a parallel output slot wrote history")
		}
	}
	if len(out.Deliveries) != 1 || out.Deliveries[0].Text != "[fake] hi" {
		t.Fatalf("deliveries %+v", out.Deliveries)
	}
}
