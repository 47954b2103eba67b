package host

import (
	"context"
	"maps"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/evolve"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/effect"
)

// coreEvolution serves evolve_core and rollback_core from the core
// repository. It never passes an operator token: a proposal that changes
// MCP declarations or loosens approval stays unpromoted until the operator
// promotes it with `demiurge core evolve promote RUN --manual-review-token`.
type coreEvolution struct{ h *Host }

var _ evolve.Evolution = coreEvolution{}

func (e coreEvolution) Start(ctx context.Context, tc effect.TurnContext, coreID, goal string) (any, error) {
	return e.h.EvolveStart(ctx, coreID, goal, EvolveStartOptions{SourceTurnID: tc.TurnID})
}

func (e coreEvolution) StartBackground(ctx context.Context, tc effect.TurnContext, coreID, goal string, notify bool) (string, error) {
	policy := "completion_event"
	if !notify {
		policy = "silent"
	}
	scope := "evolve:" + coreID
	task, err := e.h.tasks.Submit(ctx, demiurge.TaskSpec{
		Kind: demiurge.TaskKindEvolverRun,
		Payload: map[string]any{
			"owner_session_id": tc.SessionID, "owner_turn_id": tc.TurnID, "core_id": coreID,
			"notify_policy": policy, "source_tool": "evolve_core", "write_scope": scope,
			"target_core_id": coreID, "goal": goal,
			"metadata": map[string]any{"target_core_id": coreID, "goal": goal},
		},
	}, demiurge.TaskOrigin{Actor: "host.task_worker", SessionID: tc.SessionID, TurnID: tc.TurnID, CoreID: tc.CoreID, TaskID: tc.TaskID, WriteScope: scope})
	return task.ID, err
}

func (e coreEvolution) Review(ctx context.Context, runID, reason string) (any, bool, error) {
	r, err := e.h.EvolveReview(ctx, runID, reason)
	if err != nil {
		return nil, false, err
	}
	return modelReview(r), r.Passed, nil
}

// modelReview is a review as the model sees it: without the operator's
// confirmation token, wherever the review carries it (its own field and
// the data of the security gates).
func modelReview(r *corerepo.Review) *corerepo.Review {
	if r == nil {
		return nil
	}
	view := *r
	view.ReviewToken = ""
	view.Gates = make([]coregate.Gate, len(r.Gates))
	for i, g := range r.Gates {
		if data, ok := g.Data.(map[string]any); ok {
			clean := maps.Clone(data)
			delete(clean, "review_token")
			g.Data = clean
		}
		view.Gates[i] = g
	}
	return &view
}

func (e coreEvolution) Promote(ctx context.Context, runID, reason string) (any, bool, error) {
	r, err := e.h.EvolvePromote(ctx, runID, corerepo.PromoteOptions{Reason: reason})
	if err != nil {
		return nil, false, err
	}
	view := *r
	view.Review = modelReview(r.Review)
	if !r.Promoted && r.Review != nil && r.Review.ManualReviewRequired {
		view.Summary += "; the operator must promote it: demiurge core evolve promote " + runID + " --manual-review-token <token from demiurge core evolve review " + runID + ">"
	}
	return view, r.Promoted, nil
}

func (e coreEvolution) Discard(ctx context.Context, runID string) error {
	return e.h.EvolveDiscard(ctx, runID)
}

func (e coreEvolution) Rollback(ctx context.Context, target, reason string) (string, error) {
	r, err := e.h.Rollback(ctx, target, reason)
	if err != nil {
		return "", err
	}
	if r.Revision == "" {
		return "", demiurge.Errorf(demiurge.EINTERNAL, "rollback recorded no revision")
	}
	return r.Revision, nil
}
