package effect_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

type countingAdapter struct{ calls atomic.Int32 }

func (a *countingAdapter) Prepare(context.Context, effect.Invocation) (effect.Call, *effect.Outcome) {
	return effect.RunFunc(func(context.Context) (effect.Outcome, error) {
		a.calls.Add(1)
		return effect.Outcome{Content: "ran", ExecutionStarted: true}, nil
	}), nil
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
		wantStatus demiurge.EffectStatus
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
	for _, tt := range []struct {
		decision string
		runs     int32
	}{{effect.DecisionAllowOnce, 1}, {effect.DecisionAllowSession, 1}, {effect.DecisionDeny, 0}, {"garbage", 0}} {
		// A fresh runtime per case: an "always" answer is remembered.
		rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
		a := &countingAdapter{}
		ap := demiurgetest.NewApprover(tt.decision)
		tc := turnCtx()
		tc.Approver = ap
		tc.SessionID, tc.Scope = "s1", demiurge.OperatorScope("s1")
		cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", ApprovalPolicy: "prompt", Adapter: a})
		call(t, rt, cat, "t", tc)
		if a.calls.Load() != tt.runs || ap.Asked() != 1 {
			t.Errorf("decision %q: runs=%d asked=%d, want runs=%d asked=1", tt.decision, a.calls.Load(), ap.Asked(), tt.runs)
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

// spy records the order in which the dispatcher consults it.
type spy struct {
	calls []string
	deny  string // the step at which to refuse
}

func (s *spy) Prepare(ctx context.Context, inv effect.Invocation) (effect.Call, *effect.Outcome) {
	s.calls = append(s.calls, "precheck")
	if s.deny == "precheck" {
		return nil, &effect.Outcome{Content: "path escapes the workspace"}
	}
	return s, nil
}

func (s *spy) ApprovalFacts() effect.ApprovalFacts { return effect.ApprovalFacts{} }

func (s *spy) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	s.calls = append(s.calls, "approve")
	if s.deny == "approve" {
		return effect.DecisionDeny, nil
	}
	return effect.DecisionAllowOnce, nil
}

func (s *spy) Run(ctx context.Context) (effect.Outcome, error) {
	s.calls = append(s.calls, "invoke")
	return effect.Outcome{Content: "done", ExecutionStarted: true}, nil
}

// TestDispatchOrder proves the fixed order: schema validation, capability,
// pure Host checks, approval, adapter. A refusal at any step stops every
// later one.
func TestDispatchOrder(t *testing.T) {
	rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
	schema := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}, "additionalProperties": false}
	tests := []struct {
		name, deny string
		args       map[string]any
		grants     []string
		want       string
		status     demiurge.EffectStatus
	}{
		{"schema first", "", map[string]any{"path": 3}, nil, "", demiurge.EffectInvalid},
		{"capability before host checks", "", map[string]any{"path": "a"}, nil, "", demiurge.EffectDenied},
		{"host checks before approval", "precheck", map[string]any{"path": "a"}, []string{"fs.write"}, "precheck", demiurge.EffectInvalid},
		{"approval before adapter", "approve", map[string]any{"path": "a"}, []string{"fs.write"}, "precheck,approve", demiurge.EffectDenied},
		{"all pass", "", map[string]any{"path": "a"}, []string{"fs.write"}, "precheck,approve,invoke", demiurge.EffectSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spy{deny: tt.deny}
			cat := mustCatalog(t, effect.Definition{Name: "w", Source: "builtin", Schema: schema, Capability: "fs.write", ApprovalPolicy: "prompt", Adapter: s})
			req, _ := cat.Bind(demiurge.ToolCall{ID: "c", Name: "w", Arguments: tt.args}, demiurge.OriginModel)
			tc := turnCtx(tt.grants...)
			tc.Approver, tc.SessionID, tc.Scope = s, "s1", demiurge.OperatorScope("s1")
			res := rt.Execute(context.Background(), cat, req, tc)
			if got := strings.Join(s.calls, ","); got != tt.want {
				t.Fatalf("calls %q, want %q", got, tt.want)
			}
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s (%s)", res.Status, tt.status, res.ModelView)
			}
		})
	}
}

func TestInvalidArgumentsNameTheJSONPath(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"opts": map[string]any{"type": "object", "properties": map[string]any{"limit": map[string]any{"type": "integer", "maximum": 10}}},
	}}
	cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", Schema: schema, Adapter: &countingAdapter{}})
	req, _ := cat.Bind(demiurge.ToolCall{ID: "c", Name: "t", Arguments: map[string]any{"opts": map[string]any{"limit": 99}}}, demiurge.OriginModel)
	res := effect.NewRuntime(effect.Options{}).Execute(context.Background(), cat, req, turnCtx())
	if res.Status != demiurge.EffectInvalid || !strings.Contains(res.ModelView, "/opts/limit") {
		t.Fatalf("status %s view %q", res.Status, res.ModelView)
	}
}

func TestSecretsInArgumentsNeverReachViews(t *testing.T) {
	const secret = "ghp_supersecretvalue123456"
	echo := effect.AdapterFunc(func(ctx context.Context, inv effect.Invocation) (effect.Outcome, error) {
		return effect.Outcome{Content: "used " + secret, ExecutionStarted: true, Data: map[string]any{"echo": secret}}, nil
	})
	cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", Adapter: echo})
	req, _ := cat.Bind(demiurge.ToolCall{ID: "c", Name: "t", Arguments: map[string]any{"api_token": secret}}, demiurge.OriginModel)
	tc := turnCtx()
	tc.Secrets = effect.NewSecrets()
	res := effect.NewRuntime(effect.Options{}).Execute(context.Background(), cat, req, tc)
	for name, v := range map[string]any{"model": res.ModelView, "operator": res.OperatorView, "event": res.EventView, "durable": res.DurableView, "debug": res.DebugView, "data": res.Data} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s view holds the secret: %s", name, b)
		}
	}
	// The turn-wide set remembers it for later calls.
	if got := tc.Secrets.Redactor().String("later "+secret, redact.Model); strings.Contains(got, secret) {
		t.Fatalf("turn secrets forgot the value: %q", got)
	}
}
