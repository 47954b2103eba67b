package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// deliveredTexts joins a turn's delivered texts with "|".
func deliveredTexts(res turn.Result) string {
	var texts []string
	for _, d := range res.Deliveries {
		texts = append(texts, d.Text)
	}
	return strings.Join(texts, "|")
}

// openPythonHost initialises a home with the Python core of pythonCore,
// lets edit change it, and opens a Host on a script of final answers.
func openPythonHost(t *testing.T, edit func(core string), answers ...string) (*host.Host, string) {
	t.Helper()
	needPython(t)
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	pythonCore(t, home)
	edit(filepath.Join(home, "agents", "assistant"))
	confirmSave(t, home)
	var script []demiurge.ModelResponse
	for _, a := range answers {
		script = append(script, demiurge.ModelResponse{Content: a})
	}
	h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: demiurgetest.Script(t, script...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h, home
}

// ctx.tools.call from a Python slot: tool.call:<name> is checked for the
// slot first (PermissionError naming it), then the tool runs as a model's
// call would, with its approval asked of the turn's approver; the echo
// tool is Python too, so its call nests into the slot's worker.
func TestPythonToolsCallFromSlot(t *testing.T) {
	h, home := openPythonHost(t, func(core string) {
		writeFile(t, filepath.Join(core, "agent/input/base_input/slot.yaml"), "failure_policy: hard\ncapabilities: [tool.call:echo]\n")
		echo := filepath.Join(core, "agent/tools/echo/tool.yaml")
		b, err := os.ReadFile(echo)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, echo, strings.Replace(string(b), "approval_policy: auto", "approval_policy: prompt", 1))
		writeFile(t, filepath.Join(core, "agent/input/base_input/module.py"), `
async def process(ctx):
    ctx.input.add_context(ctx.input.raw_text, role="user")
    try:
        await ctx.tools.call("todo", {})
    except PermissionError as e:
        ctx.input.progress("denied: " + str(e))
    r = await ctx.tools.call("echo", {"text": "from slot"})
    ctx.input.progress("echo: %s %s %s" % (r.content, r.is_error, r["display_output"]))
    ctx.input.progress("root: " + ctx.input.session_root)
`)
	}, "one", "two")
	ctx := context.Background()

	deny := demiurgetest.NewApprover(effect.DecisionDeny)
	res, err := h.Run(ctx, turn.Request{Text: "hi", NewSession: true, Approver: deny})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	got := deliveredTexts(res)
	if !strings.Contains(got, "denied: capability denied: tool.call:todo for agent/input/base_input") {
		t.Errorf("no denial of tool.call:todo: %q", got)
	}
	if !strings.Contains(got, "echo: approval denied: Call authored tool echo True") {
		t.Errorf("denied approval: %q", got)
	}
	if deny.Asked() != 1 || deny.Requests()[0].Tool != "echo" {
		t.Errorf("approver asked %+v", deny.Requests())
	}
	wantRoot := filepath.Join(home, "runtime", "artifacts", res.SessionID)
	if !strings.Contains(got, "root: "+wantRoot) {
		t.Errorf("session_root: %q, want %s", got, wantRoot)
	}

	allow := demiurgetest.NewApprover(effect.DecisionAllowOnce)
	res, err = h.Run(ctx, turn.Request{Text: "again", SessionID: res.SessionID, Approver: allow})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if got := deliveredTexts(res); !strings.Contains(got, "echo: echo:from slot False shown") {
		t.Errorf("allowed call: %q", got)
	}
}

// The same from Starlark: the call's result is a record read by attribute
// or key, and a denial fails the slot with the capability named.
func TestStarlarkToolsCallFromSlot(t *testing.T) {
	h, _ := openPythonHost(t, func(core string) {
		writeFile(t, filepath.Join(core, "agent/output/base_output/slot.yaml"), "failure_policy: hard\ncapabilities: [tool.call:echo]\n")
		writeFile(t, filepath.Join(core, "agent/output/base_output/module.star"), `
def process(ctx):
    r = ctx.tools.call("echo", {"text": "star"})
    ctx.output.send_text("%s|%s|%s" % (r.content, r["is_error"], r.display_output))
    if ctx.output.response_text == "deny me":
        ctx.tools.call("todo")
`)
		removeFile(t, filepath.Join(core, "agent/output/base_output/module.py"))
	}, "fine", "deny me")
	ctx := context.Background()
	res, err := h.Run(ctx, turn.Request{Text: "hi", NewSession: true, Approver: demiurgetest.NewApprover(effect.DecisionAllowOnce)})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if got := deliveredTexts(res); !strings.Contains(got, "echo:star|False|shown") {
		t.Errorf("deliveries %q", got)
	}
	res, err = h.Run(ctx, turn.Request{Text: "hi", SessionID: res.SessionID, Approver: demiurgetest.NewApprover(effect.DecisionAllowOnce)})
	if err != nil || res.Outcome != turn.OutcomeFailed || res.Error == nil ||
		!strings.Contains(res.Error.Message, "capability denied: tool.call:todo for agent/output/base_output") {
		t.Fatalf("denied call: %v %+v", err, res)
	}
}

func removeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// confirmSave saves the local edits as the operator would, confirming the
// grants they add (`demiurge core save --confirm <token>`).
func confirmSave(t *testing.T, home string) {
	t.Helper()
	ctx := context.Background()
	repo, err := host.OpenRepo(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	_, err = repo.Save(ctx, corerepo.SaveOptions{Reason: "test"})
	var ge *coregate.GateError
	if errors.As(err, &ge) && ge.Token != "" {
		_, err = repo.Save(ctx, corerepo.SaveOptions{Reason: "test", Confirm: ge.Token})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// ctx.agents.run from Python: a synchronous child turn of the evolver (its
// deliveries and result come back as an AgentRunResult); a core the slot
// may not run is a PermissionError naming agents.run:<core>;
// ctx.skills.activate passes for a granted skill and is denied otherwise.
func TestPythonAgentsRunAndSkills(t *testing.T) {
	h, _ := openPythonHost(t, func(core string) {
		writeFile(t, filepath.Join(core, "agent/output/base_output/slot.yaml"), "failure_policy: hard\ncapabilities: [agents.run:evolver]\n")
		writeFile(t, filepath.Join(core, "agent/output/base_output/module.py"), `
async def process(ctx):
    try:
        ctx.agents.run("assistant", "x")
    except PermissionError as e:
        ctx.output.progress("denied: " + str(e))
    r = await ctx.agents.run("evolver", "child goal", tools="none", context="be brief")
    ctx.output.send_text("child %s %s %s %d" % (r.core_id, r.content, r.session_id.startswith("session_child_"), len(r.deliveries)))
`)
		writeFile(t, filepath.Join(core, "agent/input/base_input/module.py"), `
def process(ctx):
    ctx.input.add_context(ctx.input.raw_text, role="user")
    ctx.skills.activate("debugging")
`)
	}, "parent answer", "child answer")
	res, err := h.Run(context.Background(), turn.Request{Text: "hi", NewSession: true})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	got := deliveredTexts(res)
	if !strings.Contains(got, "denied: capability denied: agents.run:assistant for agent/output/base_output") ||
		!strings.Contains(got, "child evolver child answer True 1") {
		t.Errorf("deliveries %q", got)
	}
}

// ctx.state from Python: writes are visible to later reads of the same
// turn, survive the turn and a Host restart, the session document is the
// session's and the core document the core's; a read without the grant is
// a PermissionError naming the capability.
func TestPythonStateAcrossTurnsAndRestarts(t *testing.T) {
	h, home := openPythonHost(t, func(core string) {
		writeFile(t, filepath.Join(core, "agent/input/base_input/slot.yaml"),
			"failure_policy: hard\ncapabilities: [state.session.read, state.session.write, 'state.core.read:counter', 'state.core.write:counter']\n")
		writeFile(t, filepath.Join(core, "agent/input/base_input/module.py"), `
def process(ctx):
    ctx.input.add_context(ctx.input.raw_text, role="user")
    n = ctx.state.session.get("visits.count", 0)
    ctx.state.session.set("visits.count", n + 1)
    ctx.state.session.append("visits.texts", ctx.input.raw_text)
    ctx.state.session.merge("profile", {"seen": True})
    ctx.state.core.set("counter", ctx.state.core.get("counter", 0) + 1)
    try:
        ctx.state.core.snapshot()
    except PermissionError as e:
        ctx.input.progress("denied: " + str(e))
    s = ctx.state.session.snapshot()
    ctx.input.progress("state: %d %s %s %s" % (ctx.state.session.get("visits.count"), s["visits"]["texts"], s["profile"], ctx.state.core.get("counter")))
`)
	}, "a", "b")
	ctx := context.Background()
	run := func(h *host.Host, req turn.Request) (turn.Result, string) {
		t.Helper()
		res, err := h.Run(ctx, req)
		if err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn: %v %+v", err, res)
		}
		return res, deliveredTexts(res)
	}
	res, got := run(h, turn.Request{Text: "hi", NewSession: true})
	if !strings.Contains(got, "denied: capability denied: state.core.read for agent/input/base_input") ||
		!strings.Contains(got, "state: 1 ['hi'] {'seen': True} 1") {
		t.Errorf("first turn: %q", got)
	}
	if _, got := run(h, turn.Request{Text: "again", SessionID: res.SessionID}); !strings.Contains(got, "state: 2 ['hi', 'again'] {'seen': True} 2") {
		t.Errorf("second turn: %q", got)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	h2, err := host.Open(ctx, host.Options{Home: home, FakeScript: demiurgetest.Script(t, demiurge.ModelResponse{Content: "c"}, demiurge.ModelResponse{Content: "d"})})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(ctx)
	if _, got := run(h2, turn.Request{Text: "restarted", SessionID: res.SessionID}); !strings.Contains(got, "state: 3 ['hi', 'again', 'restarted'] {'seen': True} 3") {
		t.Errorf("after a restart: %q", got)
	}
	if _, got := run(h2, turn.Request{Text: "new", NewSession: true}); !strings.Contains(got, "state: 1 ['new'] {'seen': True} 4") {
		t.Errorf("another session: %q", got)
	}
}
