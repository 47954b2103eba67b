package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is required")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pythonCore turns the default assistant core into one whose input and
// output slots and echo tool are module.py, written as the original writes
// them (async process, relative import of agent/lib, demiurge.sdk).
func pythonCore(t *testing.T, home string) {
	t.Helper()
	core := filepath.Join(home, "agents", "assistant")
	for _, rel := range []string{"agent/input/base_input/module.star", "agent/output/base_output/module.star", "agent/tools/echo/module.star"} {
		if err := os.Remove(filepath.Join(core, rel)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(core, "agent/lib/style/__init__.py"), "")
	writeFile(t, filepath.Join(core, "agent/lib/style/tone.py"), "def hint():\n    return 'Answer briefly.'\n")
	writeFile(t, filepath.Join(core, "agent/input/base_input/module.py"), `
from .style.tone import hint

async def process(ctx):
    ctx.input.add_context(hint())
    ctx.input.add_context(ctx.input.raw_text, role="user")
    if not ctx.capability.can("agents.spawn:evolver", slot_path=None):
        raise RuntimeError("expected the default grant")
    try:
        ctx.capability.require("secret.bind:NOPE")
    except PermissionError as e:
        ctx.input.progress("denied: " + str(e))
`)
	writeFile(t, filepath.Join(core, "agent/output/base_output/module.py"), `
def process(ctx):
    recent = ctx.history.recent_messages(10)
    ctx.output.send_text(ctx.output.response_text + " (py, %d earlier)" % len(recent))
`)
	writeFile(t, filepath.Join(core, "agent/tools/echo/module.py"), `
from demiurge.sdk import ToolResult

def execute(ctx, args):
    if args.get("text") == "boom":
        raise ValueError("no boom here")
    return ToolResult(content="echo:" + args["text"], display_output="shown")
`)
}

func TestPythonSlotsAndToolsRunAcrossTurns(t *testing.T) {
	needPython(t)
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	pythonCore(t, home)
	h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t,
		demiurge.ModelResponse{ToolCalls: []demiurge.ToolCall{{ID: "c1", Name: "echo", Arguments: map[string]any{"text": "hi"}}}},
		demiurge.ModelResponse{ToolCalls: []demiurge.ToolCall{{ID: "c2", Name: "echo", Arguments: map[string]any{"text": "boom"}}}},
		demiurge.ModelResponse{Content: "done"},
		demiurge.ModelResponse{Content: "second"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	res, err := h.Run(ctx, turn.Request{Text: "hello", NewSession: true})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Content != "echo:hi" {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	if c := res.ToolCalls[1]; !c.IsError || !c.ExecutionStarted || c.Content != "agent/tools/echo/module.py:6: ValueError: no boom here" {
		t.Errorf("failing tool call = %+v", c)
	}
	var texts []string
	for _, d := range res.Deliveries {
		texts = append(texts, d.Text)
	}
	joined := strings.Join(texts, "|")
	if !strings.Contains(joined, "denied: capability denied: secret.bind:NOPE for agent/input/base_input") || !strings.Contains(joined, "done (py, ") {
		t.Errorf("deliveries = %q", joined)
	}
	res2, err := h.Run(ctx, turn.Request{Text: "again", SessionID: res.SessionID})
	if err != nil || res2.Outcome != turn.OutcomeCompleted {
		t.Fatalf("second turn: %v %+v", err, res2)
	}
	if got := res2.Deliveries[len(res2.Deliveries)-1].Text; !strings.HasPrefix(got, "second (py, ") {
		t.Errorf("second turn delivered %q", got)
	}
}

// A slot that imports a module the interpreter lacks fails naming it (under
// the hard policy, the turn fails with it); a missing interpreter fails the load of a Python core in one line
// naming runtime.python.
func TestPythonFaults(t *testing.T) {
	needPython(t)
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	pythonCore(t, home)
	core := filepath.Join(home, "agents", "assistant")
	writeFile(t, filepath.Join(core, "agent/input/hint/slot.yaml"), "failure_policy: hard\n")
	writeFile(t, filepath.Join(core, "agent/input/hint/module.py"), "import no_such_module_here\ndef process(ctx):\n    pass\n")
	writeFile(t, filepath.Join(core, "agent/pipelines.yaml"), "schema_version: 1\ninput:\n  serial: [hint, base_input]\n  parallel: []\noutput:\n  serial: [base_output]\n  parallel: []\nbootstrap:\n  serial: [session_context]\n")
	h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t, demiurge.ModelResponse{Content: "ok"})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(context.Background(), turn.Request{Text: "x", NewSession: true})
	if err != nil || res.Outcome != turn.OutcomeFailed || res.Error == nil ||
		res.Error.Message != "input slot hint failed: agent/input/hint/module.py:1: ModuleNotFoundError: No module named 'no_such_module_here'" {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	writeFile(t, filepath.Join(home, "config.yaml"), "runtime:\n  python: /nonexistent/python3\n")
	h2, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t, demiurge.ModelResponse{Content: "ok"})})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(context.Background())
	_, err = h2.LoadCore(context.Background(), "assistant")
	if msg := demiurge.ErrorMessage(err); !strings.HasPrefix(msg, "runtime.python: ") || strings.Contains(msg, "\n") {
		t.Errorf("load without interpreter: %q", msg)
	}
}
