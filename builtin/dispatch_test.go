package builtin_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// TestThroughDispatcher runs auto-approved file tools through the real
// effect runtime: outcomes map to the statuses the turn records.
func TestThroughDispatcher(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "hello")
	e.write(".env", "K=v")
	cat, err := effect.NewCatalog(e.tc.CoreID, e.tc.CoreRevision, builtin.Definitions([]string{"coding"}, e.deps))
	if err != nil {
		t.Fatal(err)
	}
	rt := effect.NewRuntime(effect.Options{})
	exec := func(tc effect.TurnContext, name string, args map[string]any) demiurge.EffectResult {
		req, ok := cat.Bind(demiurge.ToolCall{ID: "c1", Name: name, Arguments: args}, demiurge.OriginModel)
		if !ok {
			t.Fatalf("%s not bound", name)
		}
		return rt.Execute(context.Background(), cat, req, tc)
	}
	for _, tt := range []struct {
		name   string
		args   map[string]any
		status demiurge.EffectStatus
		view   string
	}{
		{"read_file", map[string]any{"path": "a.txt"}, demiurge.EffectSucceeded, "hello"},
		{"read_file", map[string]any{"path": "../home/agents/demo/agent.yaml"}, demiurge.EffectDenied, "path is private to the Host: ../home/agents/demo/agent.yaml"},
		{"write_file", map[string]any{"path": "../a.txt", "content": "x"}, demiurge.EffectDenied, "path escapes workspace: ../a.txt"},
		{"read_file", map[string]any{"path": "missing"}, demiurge.EffectInvalid, "path does not exist: missing"},
		{"search_files", map[string]any{"query": "hell"}, demiurge.EffectSucceeded, "a.txt:1: hello"},
		{"todo", map[string]any{"action": "add", "text": "x"}, demiurge.EffectSucceeded, "todo added: x"},
	} {
		res := exec(e.tc, tt.name, tt.args)
		if res.Status != tt.status || res.ModelView != tt.view {
			t.Errorf("%s %v: status=%s view=%q, want %s %q", tt.name, tt.args, res.Status, res.ModelView, tt.status, tt.view)
		}
		if tt.status == demiurge.EffectDenied && (res.Data["denial"] != "policy" || res.Data["executionStarted"] != false) {
			t.Errorf("%s %v: data=%v, want a policy denial that never started", tt.name, tt.args, res.Data)
		}
	}
	noRead := e.tc
	noRead.Grants = policy.NewGrants(nil, nil)
	if res := exec(noRead, "read_file", map[string]any{"path": "a.txt"}); res.Status != demiurge.EffectDenied {
		t.Errorf("read_file without fs.read: status=%s", res.Status)
	}
}
