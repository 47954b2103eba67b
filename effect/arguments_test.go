package effect

import (
	"context"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
)

// messagingAdapter names its own sentence for x == "bad", and scribbles
// on the arguments it is given to show they are a copy.
type messagingAdapter struct {
	invoked, asked int
	schemaMsg      string
}

func (a *messagingAdapter) Prepare(context.Context, Invocation) (Call, *Outcome) {
	return RunFunc(func(context.Context) (Outcome, error) {
		a.invoked++
		return Outcome{Content: "ran", ExecutionStarted: true}, nil
	}), nil
}

func (a *messagingAdapter) ArgumentError(args map[string]any, schemaMsg string) string {
	a.asked++
	a.schemaMsg = schemaMsg
	bad := args["x"] == "bad"
	args["x"] = "scribbled"
	if bad {
		return "unsupported x: bad"
	}
	return ""
}

func TestArgumentMessenger(t *testing.T) {
	schema := map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{"x": map[string]any{"type": "string", "enum": []any{"good"}}},
	}
	for _, tt := range []struct {
		x         any
		status    string
		view      string
		asked     int
		schemaMsg bool
	}{
		{"good", demiurge.EffectSucceeded, "ran", 0, false},
		{"bad", demiurge.EffectInvalid, "unsupported x: bad", 1, true},
		{"other", demiurge.EffectInvalid, "invalid arguments for t: at /x: value must be 'good'", 1, true},
	} {
		a := &messagingAdapter{}
		cat, err := NewCatalog("c", "r1", []Definition{{Name: "t", Source: SourceBuiltin, Schema: schema, Adapter: a}})
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"x": tt.x}
		req, ok := cat.Bind(demiurge.ToolCall{ID: "c1", Name: "t", Arguments: args}, demiurge.OriginModel)
		if !ok {
			t.Fatal("not bound")
		}
		res := NewRuntime(Options{}).Execute(context.Background(), cat, req, TurnContext{CoreID: "c", CoreRevision: "r1"})
		if res.Status != tt.status || res.ModelView != tt.view || res.ExecutionStarted != (tt.status == demiurge.EffectSucceeded) {
			t.Errorf("x=%v: %s %q, want %s %q", tt.x, res.Status, res.ModelView, tt.status, tt.view)
		}
		if a.asked != tt.asked || (a.schemaMsg != "") != tt.schemaMsg {
			t.Errorf("x=%v: asked %d with %q", tt.x, a.asked, a.schemaMsg)
		}
		if tt.status != demiurge.EffectSucceeded && a.invoked != 0 {
			t.Errorf("x=%v: the adapter ran on refused arguments", tt.x)
		}
		if req.Arguments["x"] != tt.x {
			t.Errorf("x=%v: the messenger changed the request's arguments to %v", tt.x, req.Arguments["x"])
		}
	}
}

func TestRaisedRisk(t *testing.T) {
	for _, tt := range []struct{ entry, adapter, want string }{
		{"low", "", "low"},
		{"low", "high", "high"},
		{"medium", "low", "medium"},
		{"critical", "high", "critical"},
		{"high", "high", "high"},
		{"low", "bogus", "critical"},
	} {
		if got := raisedRisk(tt.entry, tt.adapter); got != tt.want {
			t.Errorf("raisedRisk(%q, %q) = %q, want %q", tt.entry, tt.adapter, got, tt.want)
		}
	}
}

// riskyAdapter raises its calls to prompt at risk high.
type riskyAdapter struct{}

func (riskyAdapter) Prepare(context.Context, Invocation) (Call, *Outcome) { return riskyAdapter{}, nil }

func (riskyAdapter) Run(context.Context) (Outcome, error) {
	return Outcome{Content: "ran", ExecutionStarted: true}, nil
}

func (riskyAdapter) ApprovalFacts() ApprovalFacts {
	return ApprovalFacts{Action: "read", Summary: "Read file /x (outside the workspace)", Baseline: policy.Prompt, Risk: "high"}
}

type riskRecorder struct {
	mu    sync.Mutex
	risks []string
}

func (r *riskRecorder) Approve(_ context.Context, req ApprovalRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.risks = append(r.risks, req.Risk)
	return DecisionAllowOnce, nil
}

// TestApprovalFactsRaiseRisk: the operator's question carries the risk an
// adapter raises a call to, never less than the entry's.
func TestApprovalFactsRaiseRisk(t *testing.T) {
	for _, tt := range []struct{ entry, want string }{{"low", "high"}, {"critical", "critical"}} {
		cat, err := NewCatalog("c", "r1", []Definition{{Name: "t", Source: SourceBuiltin, Risk: tt.entry, Adapter: riskyAdapter{}}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := cat.Bind(demiurge.ToolCall{ID: "c1", Name: "t", Arguments: map[string]any{}}, demiurge.OriginModel)
		rec := &riskRecorder{}
		rt := NewRuntime(Options{Approvals: NewApprovalRuntime(ApprovalOptions{})})
		res := rt.Execute(context.Background(), cat, req, TurnContext{CoreID: "c", CoreRevision: "r1", Approver: rec, SessionID: "s", Scope: demiurge.OperatorScope("s")})
		if res.Status != demiurge.EffectSucceeded || len(rec.risks) != 1 || rec.risks[0] != tt.want {
			t.Errorf("entry risk %s: %s %q, asked with %v, want %s", tt.entry, res.Status, res.ModelView, rec.risks, tt.want)
		}
	}
}
