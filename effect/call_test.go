package effect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// recheckAdapter prepares calls that count their phases; refuse makes the
// recheck refuse.
type recheckAdapter struct {
	prepared, rechecked, ran int
	refuse                   bool
}

func (a *recheckAdapter) Prepare(context.Context, effect.Invocation) (effect.Call, *effect.Outcome) {
	a.prepared++
	return (*recheckCall)(a), nil
}

type recheckCall recheckAdapter

func (c *recheckCall) ApprovalFacts() effect.ApprovalFacts { return effect.ApprovalFacts{} }

func (c *recheckCall) Recheck(context.Context) *effect.Outcome {
	c.rechecked++
	if c.refuse {
		return &effect.Outcome{Content: "cwd changed while the operator decided", ExecutionStarted: true}
	}
	return nil
}

func (c *recheckCall) Run(context.Context) (effect.Outcome, error) {
	c.ran++
	return effect.Outcome{Content: "ran", ExecutionStarted: true}, nil
}

// TestRecheckAfterApproval: a call is prepared once; it is checked again
// only when someone was asked about it, and a refusal there never lets it
// run.
func TestRecheckAfterApproval(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		policy                 string
		refuse                 bool
		status                 demiurge.EffectStatus
		rechecked, ran, prompt int
	}{
		{"auto runs as prepared", effect.ApprovalAuto, false, demiurge.EffectSucceeded, 0, 1, 0},
		{"approved is rechecked", effect.ApprovalPrompt, false, demiurge.EffectSucceeded, 1, 1, 1},
		{"recheck refuses", effect.ApprovalPrompt, true, demiurge.EffectInvalid, 1, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &recheckAdapter{refuse: tt.refuse}
			ap := demiurgetest.NewApprover(effect.DecisionAllowOnce)
			rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
			tc := turnCtx()
			tc.Approver, tc.SessionID, tc.Scope = ap, "s1", demiurge.OperatorScope("s1")
			res := call(t, rt, mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", ApprovalPolicy: tt.policy, Adapter: a}), "t", tc)
			if res.Status != tt.status || a.prepared != 1 || a.rechecked != tt.rechecked || a.ran != tt.ran || ap.Asked() != tt.prompt {
				t.Fatalf("status %s prepared %d rechecked %d ran %d asked %d, want %s 1 %d %d %d (%s)",
					res.Status, a.prepared, a.rechecked, a.ran, ap.Asked(), tt.status, tt.rechecked, tt.ran, tt.prompt, res.ModelView)
			}
			if tt.refuse && (res.ExecutionStarted || res.ModelView != "cwd changed while the operator decided") {
				t.Fatalf("a recheck refusal started or lost its message: %+v", res)
			}
		})
	}
}

func TestDecodeArgs(t *testing.T) {
	type args struct {
		Path    string  `json:"path"`
		Limit   int64   `json:"limit"`
		Mkdirs  bool    `json:"mkdirs"`
		Pattern *string `json:"pattern"`
	}
	defaults := args{Limit: 20, Mkdirs: true}
	entry, err := effect.Definition{Name: "read"}.Bind("c", "r")
	if err != nil {
		t.Fatal(err)
	}
	got, out := effect.DecodeArgs(effect.Invocation{Entry: entry, Args: map[string]any{"path": "a", "limit": float64(5), "mkdirs": nil}}, defaults)
	if out != nil || got.Path != "a" || got.Limit != 5 || !got.Mkdirs || got.Pattern != nil {
		t.Fatalf("decoded %+v %v", got, out)
	}
	got, _ = effect.DecodeArgs(effect.Invocation{Args: map[string]any{"pattern": ""}}, defaults)
	if got.Pattern == nil || *got.Pattern != "" || got.Limit != 20 {
		t.Fatalf("a given empty pattern or a default was lost: %+v", got)
	}
	if _, out := effect.DecodeArgs(effect.Invocation{Entry: entry, Args: map[string]any{"limit": "x"}}, defaults); out == nil ||
		!out.IsError || out.ExecutionStarted || !strings.HasPrefix(out.Content, "invalid arguments for read: at /limit") {
		t.Fatalf("a mistyped argument decoded: %+v", out)
	}
}
