package builtin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

func run(t *testing.T, toolsets []string, name string, args map[string]any) (demiurge.EffectResult, *effect.Catalog) {
	t.Helper()
	cat, err := effect.NewCatalog("assistant", "rev", builtin.Definitions(toolsets, builtin.Deps{}))
	if err != nil {
		t.Fatal(err)
	}
	req, ok := cat.Bind(demiurge.ToolCall{ID: "c1", Name: name, Arguments: args}, demiurge.OriginModel)
	if !ok {
		t.Fatalf("%s not in catalog", name)
	}
	tc := effect.TurnContext{CoreID: "assistant", CoreRevision: "rev", Grants: policy.NewGrants(nil, nil)}
	return effect.NewRuntime(effect.Options{}).Execute(context.Background(), cat, req, tc), cat
}

func TestToolsListReadsItsOwnCatalog(t *testing.T) {
	res, cat := run(t, []string{"coding", "demiurge_control"}, "tools_list", nil)
	if res.Status != demiurge.EffectSucceeded {
		t.Fatalf("status %s: %s", res.Status, res.ModelView)
	}
	var model struct {
		Count int `json:"count"`
		Tools []struct {
			Name   string `json:"name"`
			Source string `json:"source"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.ModelView), &model); err != nil {
		t.Fatal(err)
	}
	if got, want := model.Count, len(cat.Entries()); got != want || len(model.Tools) != want {
		t.Fatalf("count=%d tools=%d, want %d", got, len(model.Tools), want)
	}
	var op map[string]any
	if err := json.Unmarshal([]byte(res.OperatorView), &op); err != nil {
		t.Fatal(err)
	}
	first := op["tools"].([]any)[0].(map[string]any)
	if first["core_id"] != "assistant" || first["core_revision"] != "rev" {
		t.Fatalf("operator view lacks binding: %v", first)
	}
}

func TestClarifyTerminates(t *testing.T) {
	res, _ := run(t, []string{"coding"}, "clarify", map[string]any{"question": "Which file?", "choices": []any{"a", " ", "c", "d"}})
	if !res.Terminate || res.Data["needs_user"] != true || res.ModelView != "Need user input: Which file?" {
		t.Fatalf("got %+v", res)
	}
	if got := len(res.Data["choices"].([]any)); got != 3 {
		t.Fatalf("choices=%d, want 3 (blank choices dropped)", got)
	}
	// More than four choices break the schema: the call never reaches the tool.
	five, _ := run(t, []string{"coding"}, "clarify", map[string]any{"question": "Which file?", "choices": []any{"a", "b", "c", "d", "e"}})
	if five.Status != demiurge.EffectInvalid || five.Terminate {
		t.Fatalf("five choices status=%s terminate=%v", five.Status, five.Terminate)
	}
	bad, _ := run(t, []string{"coding"}, "clarify", map[string]any{"question": "  "})
	if bad.Status != demiurge.EffectInvalid {
		t.Fatalf("blank question status=%s", bad.Status)
	}
}

func TestDefinitionsDeduplicateAcrossToolsets(t *testing.T) {
	defs := builtin.Definitions([]string{"demiurge_control", "coding", "demiurge_control"}, builtin.Deps{})
	seen := map[string]int{}
	for _, d := range defs {
		seen[d.Name]++
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s appears %d times", n, c)
		}
	}
	if defs[0].Name != "tools_list" {
		t.Errorf("first tool %s, want tools_list (toolset order)", defs[0].Name)
	}
}
