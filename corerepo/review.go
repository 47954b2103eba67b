package corerepo

import (
	"context"
	"maps"
	"path/filepath"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

// Review is the outcome of reviewing an evolve run (review.json).
type Review struct {
	RunID                string                    `json:"run_id"`
	TargetCoreID         string                    `json:"target_core_id"`
	BaseRevision         string                    `json:"base_revision"`
	LiveRevision         string                    `json:"live_revision"`
	Stale                bool                      `json:"stale"` // base is no longer live: promotion will be refused
	ProposalRevision     *string                   `json:"proposal_revision"`
	ChangedFiles         []coretree.Change         `json:"changed_files"`
	Gates                []coregate.Gate           `json:"gates"`
	Passed               bool                      `json:"passed"`
	ManualReviewRequired bool                      `json:"manual_review_required"`
	ReviewToken          string                    `json:"review_token,omitempty"`
	MCPChanges           []coregate.MCPChange      `json:"mcp_changes"`
	ApprovalChanges      []coregate.ApprovalChange `json:"approval_changes"`
	Diff                 string                    `json:"diff"` // secret-safe
	Summary              string                    `json:"summary"`
	ReportPath           string                    `json:"report_path"`
	ReviewPath           string                    `json:"review_path"`
	CleanedArtifacts     []string                  `json:"cleaned_artifacts"`
}

// ReviewOptions qualify Review.
type ReviewOptions struct {
	Reason string // recorded in the proposal commit message
}

// Review commits the run tree as the run's proposal (when it changed since
// the last review; refs/demiurge/runs/<run_id> names it), runs the gates
// against the run's base revision and writes review.json, proposal.json,
// gates.json and report.md (with a secret-safe diff) in the run directory.
// Gates, in order: path_safety, artifact, dependency, core_load:<core>…,
// mcp_security, approval_security, cross_core_references. The two
// security gates pass but set manual_review_required; ReviewToken is then
// a fresh token Promote accepts (for ReviewTokenTTL, and only for this
// run's proposal as reviewed). The files written in the run directory
// never hold the token: the operator gets it from Review's result
// (`demiurge core evolve review`).
//
// Errors: ENOTFOUND "evolve run not found: <id>"; ECONFLICT "evolve run is
// still running: <id>" while its start holds it.
func (r *Repo) Review(ctx context.Context, runID string, opts ReviewOptions) (*Review, error) {
	run, err := r.openRun(runID)
	if err != nil {
		return nil, err
	}
	l, err := run.hold()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	rv, _, err := r.reviewHeld(ctx, run, opts)
	return rv, err
}

// reviewHeld reviews a run whose lock the caller holds. When manual review
// is required it also returns what the review token confirms.
func (r *Repo) reviewHeld(ctx context.Context, run *Run, opts ReviewOptions) (*Review, *coregate.Confirmation, error) {
	base, _ := coretree.ParseHash(run.BaseRevision)
	head, err := run.head()
	if err != nil {
		return nil, nil, err
	}
	cleaned, res, err := r.cleanArtifacts(run, head)
	if err != nil {
		return nil, nil, err
	}
	newTree, problems, content := res.Proposed()
	if !res.Clean() && len(problems) == 0 {
		tree, err := r.git.StoreTree(newTree, content)
		if err != nil {
			return nil, nil, err
		}
		msg := "evolve proposal " + run.ID + "\n\nReason: " + oneLine(opts.Reason, "evolve goal: "+oneLine(run.Goal, "")) + "\n"
		c, err := r.git.WriteCommit(tree, []coretree.Hash{head}, msg)
		if err != nil {
			return nil, nil, err
		}
		if err := r.git.SetRef(runRef(run.ID), c); err != nil {
			return nil, nil, err
		}
		if err := gitrepo.WriteFile(filepath.Join(run.Dir, runHeadFile), []byte(c.String()+"\n")); err != nil {
			return nil, nil, err
		}
		if err := r.git.Record(run.checkout(), c, newTree, res); err != nil {
			return nil, nil, err
		}
		head, content = c, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, demiurge.WrapError(demiurge.ECANCELED, err, "review cancelled")
	}
	oldTree, err := r.git.Files(base)
	if err != nil {
		return nil, nil, err
	}
	if len(problems) == 0 {
		if newTree, err = r.git.Files(head); err != nil {
			return nil, nil, err
		}
	}
	live, err := r.git.Live()
	if err != nil {
		return nil, nil, err
	}
	rv := &Review{
		RunID: run.ID, TargetCoreID: run.CoreID, BaseRevision: run.BaseRevision, LiveRevision: live.String(),
		Stale: live != base, ReportPath: run.ReportPath, ReviewPath: filepath.Join(run.Dir, runReviewFile),
		CleanedArtifacts: cleaned, Gates: []coregate.Gate{}, MCPChanges: []coregate.MCPChange{}, ApprovalChanges: []coregate.ApprovalChange{},
	}
	edit := coregate.NewEdit(coregate.Input{Root: run.AgentsDir, Old: oldTree, New: newTree, Problems: problems, Content: content, Blobs: r.git})
	rv.ChangedFiles = edit.Changed()
	if head != base && len(problems) == 0 {
		s := head.String()
		rv.ProposalRevision = &s
	}
	if len(rv.ChangedFiles) == 0 {
		rv.ChangedFiles = []coretree.Change{}
		rv.Summary = "evolve run " + run.ID + " made no changes"
		return rv, nil, r.writeReview(run, rv)
	}
	pr, err := edit.ReviewProposal(coregate.Proposal{RunID: run.ID, CoreID: run.CoreID, Base: run.BaseRevision, Revision: rv.ProposalRevision}, r.tokens)
	if err != nil {
		return nil, nil, err
	}
	rv.Gates = pr.Gates
	if len(pr.MCP) > 0 {
		rv.MCPChanges = pr.MCP
	}
	if len(pr.Approval) > 0 {
		rv.ApprovalChanges = pr.Approval
	}
	rv.ManualReviewRequired = pr.Token != ""
	rv.ReviewToken = pr.Token
	rv.Passed = rv.ProposalRevision != nil && len(coregate.Failed(rv.Gates)) == 0
	rv.Diff = edit.Diff()
	switch {
	case !rv.Passed:
		rv.Summary = "evolve run " + run.ID + " failed gates"
	case rv.ManualReviewRequired:
		rv.Summary = "evolve run " + run.ID + " passed gates; manual security review required"
	default:
		rv.Summary = "evolve run " + run.ID + " passed gates"
	}
	return rv, pr.Confirmation, r.writeReview(run, rv)
}

// proposalFile is proposal.json.
type proposalFile struct {
	RunID        string          `json:"run_id"`
	Revision     *string         `json:"revision"`
	BaseRevision string          `json:"base_revision"`
	ChangedPaths []string        `json:"changed_paths"`
	Metadata     map[string]any  `json:"metadata"`
	Gates        []coregate.Gate `json:"gates"`
}

// WithoutToken returns a copy of the review without the operator's token,
// wherever the review carries it (its own field and the data of the
// security gates): the review as it is written to the run directory, and
// as a model may see it.
func (rv *Review) WithoutToken() *Review {
	if rv == nil {
		return nil
	}
	view := *rv
	view.ReviewToken = ""
	view.Gates = make([]coregate.Gate, len(rv.Gates))
	for i, g := range rv.Gates {
		if data, ok := g.Data.(map[string]any); ok {
			if _, has := data["review_token"]; has {
				clean := maps.Clone(data)
				delete(clean, "review_token")
				g.Data = clean
			}
		}
		view.Gates[i] = g
	}
	return &view
}

// writeReview writes review.json, proposal.json, gates.json and report.md,
// without the review token.
func (r *Repo) writeReview(run *Run, rv *Review) error {
	rv = rv.WithoutToken()
	paths := make([]string, len(rv.ChangedFiles))
	for i, c := range rv.ChangedFiles {
		paths[i] = c.Path
	}
	prop := proposalFile{RunID: run.ID, Revision: rv.ProposalRevision, BaseRevision: run.BaseRevision, ChangedPaths: paths,
		Metadata: map[string]any{"target_core_id": run.CoreID}, Gates: rv.Gates}
	for _, f := range []struct {
		name string
		v    any
	}{{runPropFile, prop}, {runGatesFile, rv.Gates}, {runReviewFile, rv}} {
		if err := writeJSON(filepath.Join(run.Dir, f.name), f.v); err != nil {
			return err
		}
	}
	return gitrepo.WriteFile(run.ReportPath, []byte(reviewReport(rv)))
}
