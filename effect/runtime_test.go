package effect_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

type countingAdapter struct{ calls atomic.Int32 }

func (a *countingAdapter) Invoke(ctx context.Context, inv effect.Invocation) (effect.Outcome, error) {
	a.calls.Add(1)
	return effect.Outcome{Content: "ran", ExecutionStarted: true}, nil
}

type fixedApprover struct {
	decision string
	asked    atomic.Int32
}

func (a *fixedApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.asked.Add(1)
	return a.decision, nil
}

func turnCtx(grants ...string) effect.TurnContext {
	return effect.TurnContext{CoreID: "c", CoreRevision: "r1", Grants: policy.NewGrants(grants, nil)}
}

func mustCatalog(t *testing.T, defs ...effect.Definition) *effect.Catalog {
	t.Helper()
	cat, err := effect.NewCatalog("c", "r1", defs)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func call(t *testing.T, rt *effect.Runtime, cat *effect.Catalog, name string, tc effect.TurnContext) demiurge.EffectResult {
	t.Helper()
	req, ok := cat.Bind(demiurge.ToolCall{ID: "call_1", Name: name, Arguments: map[string]any{"x": 1}}, demiurge.OriginModel)
	if !ok {
		return effect.NotFound(cat, name)
	}
	return rt.Execute(context.Background(), cat, req, tc)
}

func TestChecksRunBeforeAdapter(t *testing.T) {
	rt := effect.NewRuntime(effect.Options{})
	tests := []struct {
		name       string
		def        effect.Definition
		tc         effect.TurnContext
		wantStatus string
		wantRuns   int32
		wantPrefix string
	}{
		{"auto runs", effect.Definition{Name: "t", Source: "builtin"}, turnCtx(), demiurge.EffectSucceeded, 1, "ran"},
		{"capability missing", effect.Definition{Name: "t", Source: "builtin", Capability: "fs.write"}, turnCtx("fs.read"), demiurge.EffectDenied, 0, "capability denied: fs.write"},
		{"capability granted", effect.Definition{Name: "t", Source: "builtin", Capability: "fs.write"}, turnCtx("fs.write"), demiurge.EffectSucceeded, 1, "ran"},
		{"deny policy", effect.Definition{Name: "t", Source: "builtin", ApprovalPolicy: "deny"}, turnCtx(), demiurge.EffectDenied, 0, "approval denied: Call builtin tool t"},
		{"prompt without operator", effect.Definition{Name: "t", Source: "builtin", ApprovalPolicy: "prompt"}, turnCtx(), demiurge.EffectDenied, 0, "approval denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &countingAdapter{}
			tt.def.Adapter = a
			res := call(t, rt, mustCatalog(t, tt.def), "t", tt.tc)
			if got, want := res.Status, tt.wantStatus; got != want {
				t.Fatalf("status=%q, want %q (%s)", got, want, res.ModelView)
			}
			if got := a.calls.Load(); got != tt.wantRuns {
				t.Fatalf("adapter ran %d times, want %d", got, tt.wantRuns)
			}
			if !strings.HasPrefix(res.ModelView, tt.wantPrefix) {
				t.Fatalf("model view %q, want prefix %q", res.ModelView, tt.wantPrefix)
			}
			if res.IsError() != (res.Error != nil) {
				t.Fatalf("IsError=%v but Error=%v", res.IsError(), res.Error)
			}
		})
	}
}

func TestApproverDecisions(t *testing.T) {
	rt := effect.NewRuntime(effect.Options{})
	for _, tt := range []struct {
		decision string
		runs     int32
	}{{effect.DecisionAllowOnce, 1}, {effect.DecisionAllowSession, 1}, {effect.DecisionDeny, 0}, {"garbage", 0}} {
		a := &countingAdapter{}
		ap := &fixedApprover{decision: tt.decision}
		tc := turnCtx()
		tc.Approver = ap
		cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", ApprovalPolicy: "prompt", Adapter: a})
		call(t, rt, cat, "t", tc)
		if a.calls.Load() != tt.runs || ap.asked.Load() != 1 {
			t.Errorf("decision %q: runs=%d asked=%d, want runs=%d asked=1", tt.decision, a.calls.Load(), ap.asked.Load(), tt.runs)
		}
	}
}

func TestNotFoundAndForeignEntry(t *testing.T) {
	rt := effect.NewRuntime(effect.Options{})
	a := &countingAdapter{}
	cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", Adapter: a})
	res := call(t, rt, cat, "nope", turnCtx())
	if res.Status != demiurge.EffectNotFound || res.ModelView != "tool not found or not allowed: nope" || res.Provenance != "unresolved:c@r1:nope" {
		t.Fatalf("got %+v", res)
	}
	// A request bound by another catalog is not executable here.
	other := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", Adapter: a})
	req, _ := other.Bind(demiurge.ToolCall{ID: "x", Name: "t"}, demiurge.OriginModel)
	if res := rt.Execute(context.Background(), cat, req, turnCtx()); res.Status != demiurge.EffectNotFound {
		t.Fatalf("foreign entry status=%q, want not_found", res.Status)
	}
	if a.calls.Load() != 0 {
		t.Fatal("adapter ran for an unbound request")
	}
}

func TestCollisionNamesBothProvenances(t *testing.T) {
	_, err := effect.NewCatalog("c", "r", []effect.Definition{
		{Name: "echo", Source: "builtin"},
		{Name: "echo", Source: "authored", Provenance: "authored:agent/tools/echo"},
	})
	if err == nil || !strings.Contains(err.Error(), "builtin:echo conflicts with authored:agent/tools/echo") {
		t.Fatalf("err=%v", err)
	}
}

func TestTimeoutIsTyped(t *testing.T) {
	rt := effect.NewRuntime(effect.Options{Timeout: 20 * time.Millisecond})
	slow := effect.AdapterFunc(func(ctx context.Context, _ effect.Invocation) (effect.Outcome, error) {
		<-ctx.Done()
		return effect.Outcome{}, ctx.Err()
	})
	res := call(t, rt, mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", Adapter: slow}), "t", turnCtx())
	if res.Status != demiurge.EffectTimedOut || !res.ExecutionStarted {
		t.Fatalf("status=%q started=%v", res.Status, res.ExecutionStarted)
	}
}

func TestArgumentsAreFrozen(t *testing.T) {
	args := map[string]any{"list": []any{"a"}}
	cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", Adapter: &countingAdapter{}})
	req, _ := cat.Bind(demiurge.ToolCall{ID: "1", Name: "t", Arguments: args}, demiurge.OriginModel)
	args["list"].([]any)[0] = "mutated"
	if got := req.Arguments["list"].([]any)[0]; got != "a" {
		t.Fatalf("bound arguments changed with the caller's map: %v", got)
	}
}
