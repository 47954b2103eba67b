package host

import (
	"context"

	"github.com/demiurge/demiurge/corerepo"
)

// The operator's side of core evolution on an open Host (the terminal UI's
// /evolve and /rollback), over the Host's own core repository: a promotion
// or rollback made here drops the cached approvals of the cores it changed.
// The evolve_core and rollback_core tools run through the same methods,
// without the operator's review token.

// EvolveReview commits a run's proposal and runs the gates. The review
// carries the operator's manual review token when one is needed.
func (h *Host) EvolveReview(ctx context.Context, runID, reason string) (*corerepo.Review, error) {
	return h.repo.Review(ctx, runID, corerepo.ReviewOptions{Reason: reason})
}

// EvolvePromote makes a reviewed proposal the live revision (see
// corerepo.Repo.Promote); it takes effect on the next turn.
func (h *Host) EvolvePromote(ctx context.Context, runID string, opts corerepo.PromoteOptions) (*corerepo.PromoteResult, error) {
	return h.repo.Promote(ctx, runID, opts)
}

// EvolveDiscard removes an evolve run and its proposal.
func (h *Host) EvolveDiscard(ctx context.Context, runID string) error {
	return h.repo.DiscardRun(ctx, runID)
}

// Rollback commits a new live revision with the tree of target ("" or
// "previous": the previous live revision); it takes effect on the next
// turn.
func (h *Host) Rollback(ctx context.Context, target, reason string) (*corerepo.RollbackResult, error) {
	if target == "" {
		target = "previous"
	}
	return h.repo.Rollback(ctx, target, reason)
}
