package slot_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
)

// fakeTools answers every call with its name and arguments.
type fakeTools struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeTools) CallTool(_ context.Context, slotPath, name string, args map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, slotPath+" "+name)
	return map[string]any{"content": "ran " + name, "is_error": false, "data": args}, nil
}

func sourceSpec(id, src string, caps ...string) demiurge.SlotSpec {
	return demiurge.SlotSpec{
		ID: id, Phase: demiurge.PhaseInput, RelPath: "agent/input/" + id,
		ModulePath: "/core/agent/input/" + id + "/module.star", Source: []byte(src),
		FailurePolicy: demiurge.FailHard, Capabilities: caps,
	}
}

// ctx.tools.call needs tool.call:<name> for the slot; the answer is a
// ToolResult record (attribute or key). ctx.skills.activate needs
// skill.activate[:<name>] and reports each name once, in request order.
func TestToolsCallAndSkillsActivate(t *testing.T) {
	tools := &fakeTools{}
	rt := newRuntime(starlark.Options{})
	s := sourceSpec("calls", `
def process(ctx):
    r = ctx.tools.call("echo", {"text": "x"})
    ctx.input.add_context(r.content + " " + r["data"]["text"] + " " + str(r.display_output), role = "user")
    ctx.skills.activate("b")
    ctx.skills.activate("a")
    ctx.skills.activate("b")
`, "tool.call:echo", "skill.activate:a", "skill.activate:b")
	res, err := rt.RunInput(context.Background(), []demiurge.SlotSpec{s}, demiurge.InputEnv{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if res.UserText != "ran echo x None" || strings.Join(res.Skills, ",") != "b,a" {
		t.Errorf("user text %q skills %v", res.UserText, res.Skills)
	}
	if len(tools.calls) != 1 || tools.calls[0] != "agent/input/calls echo" {
		t.Errorf("calls %v", tools.calls)
	}

	for _, c := range []struct{ src, want string }{
		{`ctx.tools.call("echo")`, "capability denied: tool.call:echo for agent/input/denied"},
		{`ctx.skills.activate("a")`, "capability denied: skill.activate for agent/input/denied"},
	} {
		d := sourceSpec("denied", "def process(ctx):\n    "+c.src+"\n")
		_, err := rt.RunInput(context.Background(), []demiurge.SlotSpec{d}, demiurge.InputEnv{Tools: tools, Caps: policy.NewGrants([]string{"tool.call:other"}, nil)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.src, err, c.want)
		}
	}
	if len(tools.calls) != 1 {
		t.Errorf("a denied call ran: %v", tools.calls)
	}
}
