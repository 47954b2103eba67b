package effect

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestToolPolicyAllows(t *testing.T) {
	tests := []struct {
		name   string
		policy *ToolPolicy
		tool   string
		risk   string
		want   bool
	}{
		{"nil allows all", nil, "terminal", "high", true},
		{"deny wins over allow exact", &ToolPolicy{Deny: []string{"term*"}, AllowExact: []string{"terminal"}}, "terminal", "high", false},
		{"allow exact admits listed", &ToolPolicy{AllowExact: []string{"read_file"}}, "read_file", "low", true},
		{"allow exact refuses others", &ToolPolicy{AllowExact: []string{"read_file"}}, "write_file", "medium", false},
		{"empty allow exact is none", &ToolPolicy{AllowExact: []string{}}, "read_file", "low", false},
		{"allow pattern", &ToolPolicy{Allow: []string{"*_file"}}, "write_file", "medium", true},
		{"allow pattern miss", &ToolPolicy{Allow: []string{"*_file"}}, "terminal", "high", false},
		{"risk ceiling drops higher", &ToolPolicy{MaxRisk: "medium"}, "terminal", "high", false},
		{"risk ceiling keeps equal", &ToolPolicy{MaxRisk: "medium"}, "patch", "medium", true},
		{"unknown risk is dropped by a ceiling", &ToolPolicy{MaxRisk: "critical"}, "x", "weird", false},
		{"malformed deny pattern denies", &ToolPolicy{Deny: []string{"[terminal"}}, "terminal", "high", false},
		{"parent restriction is inherited", &ToolPolicy{Parent: &ToolPolicy{Deny: []string{"terminal"}}}, "terminal", "high", false},
		{"parent allows, child allows", &ToolPolicy{Parent: &ToolPolicy{MaxRisk: "medium"}}, "patch", "medium", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Allows(tt.tool, tt.risk); got != tt.want {
				t.Errorf("Allows(%q, %q) = %v, want %v", tt.tool, tt.risk, got, tt.want)
			}
		})
	}
}

func TestPrepareAppliesToolPolicyAndExecuteRechecks(t *testing.T) {
	defs := []Definition{
		{Name: "alpha", Source: SourceBuiltin, Risk: "low", ApprovalPolicy: ApprovalAuto, Schema: map[string]any{"type": "object"},
			Adapter: AdapterFunc(func(ctx context.Context, inv Invocation) (Outcome, error) { return Outcome{Content: "ran"}, nil })},
		{Name: "beta", Source: SourceBuiltin, Risk: "low", ApprovalPolicy: ApprovalAuto, Schema: map[string]any{"type": "object"},
			Adapter: AdapterFunc(func(ctx context.Context, inv Invocation) (Outcome, error) { return Outcome{Content: "ran"}, nil })},
	}
	pol := &ToolPolicy{AllowExact: []string{"alpha"}}
	cat, err := Prepare(Sources{CoreID: "c", Revision: "r", Builtins: defs, ToolPolicy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if !cat.Has("alpha") || cat.Has("beta") {
		t.Fatalf("catalog = %v, want only alpha", cat.Definitions())
	}
	// A catalog built without the policy cannot widen a restricted turn.
	wide, err := Prepare(Sources{CoreID: "c", Revision: "r", Builtins: defs})
	if err != nil {
		t.Fatal(err)
	}
	req, ok := wide.Bind(demiurge.ToolCall{ID: "1", Name: "beta", Arguments: map[string]any{}}, "model")
	if !ok {
		t.Fatal("bind beta")
	}
	res := NewRuntime(Options{}).Execute(context.Background(), wide, req, TurnContext{CoreID: "c", CoreRevision: "r", ToolPolicy: pol})
	if res.Status != demiurge.EffectNotFound || res.ModelView != "tool not found or not allowed: beta" {
		t.Fatalf("status %s view %q, want not_found", res.Status, res.ModelView)
	}
}
