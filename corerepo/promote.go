package corerepo

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

// PromoteOptions qualify Promote.
type PromoteOptions struct {
	// Token is the operator's confirmation, needed when the proposal
	// changes MCP declarations or loosens approval configuration: a review
	// token (Review.ReviewToken) of this run, issued for the proposal as it
	// is now and not expired.
	Token  string
	Reason string
}

// PromoteResult is the outcome of Promote.
type PromoteResult struct {
	RunID         string   `json:"run_id"`
	Promoted      bool     `json:"promoted"`
	NewRevision   *string  `json:"new_revision"`
	Previous      string   `json:"previous_revision,omitempty"`
	Summary       string   `json:"summary"`
	AffectedCores []string `json:"affected_cores"`
	Review        *Review  `json:"review"`
}

// Promote makes a run's proposal the live revision. Under the repository
// lock it refuses unsaved local edits, reviews the run again (committing
// any later change of the run tree), then:
//   - no proposal: Promoted false, "evolve run <id> has no proposal changes";
//   - a failed gate: Promoted false, "evolve run <id> failed gates";
//   - manual review required and opts.Token is not a valid review token
//     for this proposal: Promoted false, "evolve run <id> requires manual
//     MCP security review" (or "… manual approval security review" for
//     approval changes alone), followed, when a token was given, by ": "
//     and why it does not confirm the proposal (another run or proposal,
//     expired, malformed);
//   - base no longer live: ECONFLICT "stale core proposal: run_id=<id>
//     base=<base> current=<live>; review or rebase the evolve run before
//     promoting";
//   - else previous=live and live=proposal move as one transaction, the
//     live checkout is brought to the proposal, and the result lists the
//     cores whose files changed (their cached approvals must be dropped;
//     Options.OnSwitch is called with them).
//
// Of two concurrent promotions one wins; the other gets ECONFLICT (the
// lock is busy, or its base is no longer live).
func (r *Repo) Promote(ctx context.Context, runID string, opts PromoteOptions) (*PromoteResult, error) {
	run, err := r.openRun(runID)
	if err != nil {
		return nil, err
	}
	res, err := r.promote(ctx, run, opts)
	if err == nil && res.Promoted && r.onSwitch != nil {
		r.onSwitch(res.AffectedCores)
	}
	return res, err
}

func (r *Repo) promote(ctx context.Context, run *Run, opts PromoteOptions) (*PromoteResult, error) {
	l, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	rl, err := run.hold()
	if err != nil {
		return nil, err
	}
	defer rl.Unlock()
	live, res, err := r.git.ScanLive()
	if err != nil {
		return nil, err
	}
	if !res.Clean() {
		return nil, dirtyError(res.Changes)
	}
	rv, conf, err := r.reviewHeld(ctx, run, ReviewOptions{Reason: opts.Reason})
	if err != nil {
		return nil, err
	}
	out := &PromoteResult{RunID: run.ID, Review: rv, AffectedCores: []string{}}
	why := ""
	confirmed := !rv.ManualReviewRequired
	if rv.ManualReviewRequired && opts.Token != "" && conf != nil {
		err := r.tokens.Check(opts.Token, *conf)
		var te *coregate.TokenError
		switch {
		case err == nil:
			confirmed = true
		case errors.As(err, &te):
			why = ": " + te.Error()
		default:
			return nil, err
		}
	}
	switch {
	case rv.ProposalRevision == nil && len(coregate.Failed(rv.Gates)) == 0:
		out.Summary = "evolve run " + run.ID + " has no proposal changes"
		return out, nil
	case !rv.Passed:
		out.Summary = "evolve run " + run.ID + " failed gates"
		return out, nil
	case !confirmed:
		out.Summary = "evolve run " + run.ID + " requires manual MCP security review" + why
		if len(rv.MCPChanges) == 0 {
			out.Summary = "evolve run " + run.ID + " requires manual approval security review" + why
		}
		return out, nil
	}
	if base := run.BaseRevision; base != live.String() {
		return nil, demiurge.Errorf(demiurge.ECONFLICT, "stale core proposal: run_id=%s base=%s current=%s; review or rebase the evolve run before promoting", run.ID, base, live)
	}
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "promote cancelled")
	}
	proposal, _ := coretree.ParseHash(*rv.ProposalRevision)
	affected, err := r.affectedCores(live, proposal)
	if err != nil {
		return nil, err
	}
	if err := r.switchLive(ctx, "promote", live, proposal, true, nil); err != nil {
		return nil, err
	}
	out.Promoted = true
	out.NewRevision = rv.ProposalRevision
	out.Previous = live.String()
	out.AffectedCores = affected
	out.Summary = "evolve promoted " + run.ID + "@" + proposal.String()[:12]
	onDisk := *out
	onDisk.Review = out.Review.WithoutToken()
	_ = writeJSON(filepath.Join(run.Dir, runPromoteFile), &onDisk)
	return out, nil
}

// affectedCores lists the cores whose files differ between two commits;
// a changed global fallback affects every core of either tree.
func (r *Repo) affectedCores(from, to coretree.Hash) ([]string, error) {
	a, err := r.git.Files(from)
	if err != nil {
		return nil, err
	}
	b, err := r.git.Files(to)
	if err != nil {
		return nil, err
	}
	da, db := subtreeDigests(a), subtreeDigests(b)
	global := da["agent.yaml"] != db["agent.yaml"]
	out := []string{}
	tops := slices.Concat(slices.Collect(maps.Keys(da)), slices.Collect(maps.Keys(db)))
	slices.Sort(tops)
	for _, top := range slices.Compact(tops) {
		if top == "agent.yaml" || (!a.HasCore(top) && !b.HasCore(top)) {
			continue
		}
		if global || da[top] != db[top] {
			out = append(out, top)
		}
	}
	return out, nil
}

// subtreeDigests returns, per top-level name of files, a digest of
// everything under it: what changed between two trees at the granularity
// of cores.
func subtreeDigests(files coretree.Tree) map[string]string {
	byTop := map[string][]string{}
	for p, e := range files {
		top, _, _ := strings.Cut(p, "/")
		byTop[top] = append(byTop[top], p+"\x00"+e.Hash.String()+"\x00"+e.Mode.String())
	}
	out := make(map[string]string, len(byTop))
	for top, lines := range byTop {
		slices.Sort(lines)
		out[top] = strings.Join(lines, "\n")
	}
	return out
}

// DiscardRun removes a run: its directory and its proposal ref. ENOTFOUND
// for an unknown run; ECONFLICT while its start still holds it.
func (r *Repo) DiscardRun(ctx context.Context, runID string) error {
	run, err := r.openRun(runID)
	if err != nil {
		return err
	}
	l, err := run.hold()
	if err != nil {
		return err
	}
	if err := r.git.DeleteRef(runRef(run.ID)); err != nil {
		l.Unlock()
		return err
	}
	// Everything but the lock file goes while the lock is held; the lock
	// file (which some platforms cannot delete while open) goes after.
	if err := os.RemoveAll(run.AgentsDir); err != nil {
		l.Unlock()
		return gitrepo.IOError("remove", run.AgentsDir, err)
	}
	if err := os.Remove(run.RequestPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.Unlock()
		return gitrepo.IOError("remove", run.RequestPath, err)
	}
	l.Unlock()
	if err := os.RemoveAll(run.Dir); err != nil {
		return gitrepo.IOError("remove", run.Dir, err)
	}
	return nil
}

// RollbackResult is the outcome of Rollback.
type RollbackResult struct {
	Revision      string   `json:"revision"` // the new live revision
	Previous      string   `json:"previous_revision"`
	Target        string   `json:"target_revision"`
	Summary       string   `json:"summary"`
	AffectedCores []string `json:"affected_cores"`
}

// Rollback commits a new live revision whose tree is target's ("" or
// "previous": the previous live revision; else a full commit id, or a
// prefix of at least 4 hex digits of a revision in the live history), with
// parent the current live and message "rollback core tree to
// <target[:12]>\n\nReason: <reason>". It is whole-tree (every core) and
// takes effect on the next turn. It refuses unsaved local edits (the spec
// message) and reports the affected cores (OnSwitch is called with them).
//
// Errors: ENOTFOUND "no previous core revision recorded" or "core revision
// not found: <rev>"; EINVALID for an ambiguous prefix; ECONFLICT when
// locked, inconsistent or dirty.
func (r *Repo) Rollback(ctx context.Context, target, reason string) (*RollbackResult, error) {
	res, err := r.rollback(ctx, target, reason)
	if err == nil && r.onSwitch != nil {
		r.onSwitch(res.AffectedCores)
	}
	return res, err
}

func (r *Repo) rollback(ctx context.Context, target, reason string) (*RollbackResult, error) {
	l, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	live, res, err := r.git.ScanLive()
	if err != nil {
		return nil, err
	}
	if !res.Clean() {
		return nil, dirtyError(res.Changes)
	}
	to, err := r.resolveRevision(target)
	if err != nil {
		return nil, err
	}
	c, err := r.git.Commit(to)
	if err != nil {
		return nil, err
	}
	msg := "rollback core tree to " + gitrepo.Short(to) + "\n\nReason: " + oneLine(reason, "operator rollback") + "\n"
	nc, err := r.git.WriteCommit(c.Tree, []coretree.Hash{live}, msg)
	if err != nil {
		return nil, err
	}
	affected, err := r.affectedCores(live, nc)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "rollback cancelled")
	}
	if err := r.switchLive(ctx, "rollback", live, nc, true, nil); err != nil {
		return nil, err
	}
	return &RollbackResult{
		Revision: nc.String(), Previous: live.String(), Target: to.String(), AffectedCores: affected,
		Summary: "rollback committed: " + gitrepo.Short(nc) + " (takes effect next turn)",
	}, nil
}

// resolveRevision turns a rollback target into a commit.
func (r *Repo) resolveRevision(target string) (coretree.Hash, error) {
	target = strings.ToLower(strings.TrimSpace(target))
	if target == "" || target == "previous" {
		prev, ok, err := r.git.Previous()
		if err != nil {
			return coretree.Hash{}, err
		}
		if !ok {
			return coretree.Hash{}, demiurge.Errorf(demiurge.ENOTFOUND, "no previous core revision recorded")
		}
		return prev, nil
	}
	notFound := demiurge.Errorf(demiurge.ENOTFOUND, "core revision not found: %s", target)
	if _, err := hex.DecodeString(target + strings.Repeat("0", len(target)%2)); err != nil || len(target) < 4 || len(target) > 40 {
		return coretree.Hash{}, notFound
	}
	if h, ok := coretree.ParseHash(target); ok {
		if _, err := r.git.Commit(h); err != nil {
			return coretree.Hash{}, notFound
		}
		return h, nil
	}
	vs, err := r.Versions(1000)
	if err != nil {
		return coretree.Hash{}, err
	}
	var found []string
	for _, v := range vs {
		if strings.HasPrefix(v.Revision, target) {
			found = append(found, v.Revision)
		}
	}
	if prev, ok, _ := r.git.Previous(); ok && strings.HasPrefix(prev.String(), target) {
		found = append(found, prev.String())
	}
	slices.Sort(found)
	found = slices.Compact(found)
	switch len(found) {
	case 0:
		return coretree.Hash{}, notFound
	case 1:
		h, _ := coretree.ParseHash(found[0])
		return h, nil
	}
	return coretree.Hash{}, demiurge.Errorf(demiurge.EINVALID, "core revision prefix %s is ambiguous", target)
}
