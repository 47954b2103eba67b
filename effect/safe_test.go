package effect_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// factsAdapter describes its approvals with fixed facts.
type factsAdapter struct {
	countingAdapter
	facts effect.ApprovalFacts
}

func (a *factsAdapter) Prepare(ctx context.Context, inv effect.Invocation) (effect.Call, *effect.Outcome) {
	run, _ := a.countingAdapter.Prepare(ctx, inv)
	return factsCall{run, a.facts}, nil
}

// factsCall is a call with fixed approval facts.
type factsCall struct {
	effect.Call
	facts effect.ApprovalFacts
}

func (c factsCall) ApprovalFacts() effect.ApprovalFacts { return c.facts }

// A call its adapter judged safe runs without asking unless the folded
// policy is deny; a Baseline still raises it.
func TestSafeCallsFoldToAutoUnlessDeny(t *testing.T) {
	for _, tt := range []struct {
		name     string
		policy   string
		facts    effect.ApprovalFacts
		status   string
		asked    int32
		runs     int32
		hasNotes bool
	}{
		{"safe under prompt runs", effect.ApprovalPrompt, effect.ApprovalFacts{Safe: true}, demiurge.EffectSucceeded, 0, 1, false},
		{"safe under auto runs", effect.ApprovalAuto, effect.ApprovalFacts{Safe: true}, demiurge.EffectSucceeded, 0, 1, false},
		{"safe under deny is denied", effect.ApprovalDeny, effect.ApprovalFacts{Safe: true}, demiurge.EffectDenied, 0, 0, false},
		{"safe with a prompt baseline asks", effect.ApprovalAuto, effect.ApprovalFacts{Safe: true, Baseline: policy.Prompt}, demiurge.EffectSucceeded, 1, 1, false},
		{"not safe under prompt asks, with notes", effect.ApprovalPrompt, effect.ApprovalFacts{Notes: []string{"runs sandboxed"}}, demiurge.EffectSucceeded, 1, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &factsAdapter{facts: tt.facts}
			approver := &notesApprover{}
			rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
			cat := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin", ApprovalPolicy: tt.policy, Adapter: a})
			tc := turnCtx()
			tc.Approver = approver
			tc.SessionID = "s"
			tc.Scope = demiurge.PrincipalScope{PrincipalID: "p", SessionID: "s"}
			res := call(t, rt, cat, "t", tc)
			if res.Status != tt.status || approver.asked != tt.asked || a.calls.Load() != tt.runs {
				t.Fatalf("status %s asked %d runs %d, want %s %d %d (%s %v)", res.Status, approver.asked, a.calls.Load(), tt.status, tt.asked, tt.runs, res.ModelView, res.Data)
			}
			if tt.hasNotes && (len(approver.notes) != 1 || approver.notes[0] != "runs sandboxed") {
				t.Fatalf("notes %q", approver.notes)
			}
		})
	}
}

type notesApprover struct {
	asked int32
	notes []string
}

func (a *notesApprover) Approve(_ context.Context, req effect.ApprovalRequest) (string, error) {
	a.asked++
	a.notes = req.Notes
	return effect.DecisionAllowOnce, nil
}
