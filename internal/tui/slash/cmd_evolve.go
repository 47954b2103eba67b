package slash

import (
	"context"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/host"
)

// Reasons recorded in the core repository's commits.
const (
	reasonReview   = "tui review"
	reasonPromote  = "tui promote"
	reasonRollback = "tui rollback"
)

// maxDiffLines bounds the proposal diff shown with a review; the report
// file has it whole.
const maxDiffLines = 400

// cmdEvolve runs the core evolution flow (spec host-runtime §7.4) in place:
// "/evolve <goal>" starts a run (the evolver edits an isolated copy of the
// live tree), reviews its proposal and, when it passed its gates, asks
// whether to promote it; "review", "promote" and "discard" act on a run
// by id.
func cmdEvolve(ctx context.Context, env Env, args string) (Outcome, error) {
	action, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	fields := strings.Fields(rest)
	switch action {
	case "":
		return Outcome{}, usage("evolve")
	case "review", "discard":
		if len(fields) != 1 {
			return Outcome{}, usageBecause("evolve", action+" takes one run id")
		}
		if action == "discard" {
			if err := env.Host().EvolveDiscard(ctx, fields[0]); err != nil {
				return Outcome{}, err
			}
			return notice("discarded evolve run " + fields[0]), nil
		}
		rv, err := env.Host().EvolveReview(ctx, fields[0], reasonReview)
		if err != nil {
			return Outcome{}, err
		}
		return reviewOutcome(env, "", rv), nil
	case "promote":
		if len(fields) < 1 || len(fields) > 2 {
			return Outcome{}, usageBecause("evolve", "promote takes a run id and, when the review asked for one, its manual review token")
		}
		token := ""
		if len(fields) == 2 {
			token = fields[1]
		}
		return promote(ctx, env, fields[0], token)
	}
	return startEvolve(ctx, env, args)
}

// startEvolve runs the evolver on goal, then reviews what it proposed.
func startEvolve(ctx context.Context, env Env, goal string) (Outcome, error) {
	h := env.Host()
	res, err := h.EvolveStart(ctx, env.CoreID(), goal, host.EvolveStartOptions{})
	if err != nil {
		return Outcome{}, err
	}
	lines := []string{escapeInline(oneLine(res.Summary)), "run_id: " + code(res.RunID), "agents_root: " + code(res.AgentsRoot), "report: " + code(res.ReportPath)}
	if s := oneLine(res.Evolver.Summary); s != "" && s != oneLine(res.Summary) {
		lines = append(lines, "evolver: "+escapeInline(s))
	}
	started := "## Evolve run " + res.RunID + "\n\n" + strings.Join(lines, "  \n")
	if len(res.ChangedFiles) == 0 {
		return notice(started + "\n\nThe evolver proposed no change; nothing to review. `/evolve discard " + res.RunID + "` removes the run."), nil
	}
	rv, err := h.EvolveReview(ctx, res.RunID, reasonReview)
	if err != nil {
		return Outcome{}, err
	}
	return reviewOutcome(env, started+"\n\n", rv), nil
}

// reviewOutcome shows a review after prefix and, when the proposal can be
// promoted, asks whether to. The user's yes is the operator's manual
// review: the token the review issued goes with the promotion.
func reviewOutcome(env Env, prefix string, rv *corerepo.Review) Outcome {
	out := notice(prefix + reviewMarkdown(rv))
	switch {
	case !rv.Passed:
		out.Notice += "\n\nThe proposal failed its gates and cannot be promoted; `/evolve discard " + rv.RunID + "` removes the run."
		out.Level = LevelWarning
		return out
	case rv.ProposalRevision == nil:
		out.Notice += "\n\nThe run has no proposal to promote."
		return out
	case rv.Stale:
		out.Level = LevelWarning
		return out
	}
	q := "Promote run " + rv.RunID + " to live (it takes effect on the next turn)?"
	if rv.ManualReviewRequired {
		q = "Run " + rv.RunID + " changes MCP servers or loosens approval (see above). Promote it to live anyway?"
	}
	token := rv.ReviewToken
	out.Confirm = &Confirm{Question: q,
		OnYes: func(ctx context.Context) (Outcome, error) { return promote(ctx, env, rv.RunID, token) },
		OnNo: func(context.Context) (Outcome, error) {
			return notice("Run " + rv.RunID + " is not promoted: `/evolve promote " + rv.RunID + "` promotes it later, `/evolve discard " + rv.RunID + "` removes it."), nil
		},
	}
	return out
}

// promote promotes a run. A proposal that needs a manual review the user
// has not given is reviewed again and shown, with the question.
func promote(ctx context.Context, env Env, runID, token string) (Outcome, error) {
	h := env.Host()
	res, err := h.EvolvePromote(ctx, runID, corerepo.PromoteOptions{Token: token, Reason: reasonPromote})
	if err != nil {
		return Outcome{}, err
	}
	if res.Promoted {
		text := escapeInline(oneLine(res.Summary))
		if res.NewRevision != nil {
			text += "  \nnew revision: " + code(*res.NewRevision)
		}
		return notice(text + "  \ntakes effect next turn"), nil
	}
	if rv := res.Review; rv != nil && rv.Passed && rv.ManualReviewRequired && token == "" {
		again, err := h.EvolveReview(ctx, runID, reasonReview)
		if err != nil {
			return Outcome{}, err
		}
		return reviewOutcome(env, escapeInline(oneLine(res.Summary))+"\n\n", again), nil
	}
	out := warning(escapeInline(oneLine(res.Summary)))
	if rv := res.Review; rv != nil {
		for _, g := range rv.Gates {
			if !g.Passed {
				out.Notice += "  \ngate " + g.Phase + " failed: " + escapeInline(oneLine(g.Detail))
			}
		}
	}
	return out, nil
}

// reviewMarkdown is a review as the CLI prints it, in markdown, with the
// proposal's secret-safe diff.
func reviewMarkdown(rv *corerepo.Review) string {
	verdict := "failed"
	if rv.Passed {
		verdict = "passed"
	}
	proposal := "(none)"
	if rv.ProposalRevision != nil {
		proposal = *rv.ProposalRevision
	}
	var b strings.Builder
	b.WriteString("## Review " + rv.RunID + ": " + verdict + "\n\n")
	b.WriteString("- proposal revision: " + code(proposal) + "\n")
	b.WriteString("- base revision: " + code(rv.BaseRevision) + "\n")
	if rv.Stale {
		b.WriteString("- stale: live is now " + code(rv.LiveRevision) + "; promotion will be refused\n")
	}
	for _, c := range rv.ChangedFiles {
		b.WriteString("- " + changeMark(c.Kind) + " " + code(c.Path) + "\n")
	}
	for _, g := range rv.Gates {
		if !g.Passed {
			b.WriteString("- gate " + g.Phase + " failed: " + escapeInline(oneLine(g.Detail)) + "\n")
		}
	}
	for _, c := range rv.ApprovalChanges {
		b.WriteString("- approval change: " + code(c.String()) + "\n")
	}
	for _, c := range rv.MCPChanges {
		b.WriteString("- mcp change: " + c.Change + " " + code(c.Path) + "\n")
		if c.Before != nil {
			b.WriteString("  - before: " + code(c.Before.Line()) + "\n")
		}
		if c.After != nil {
			b.WriteString("  - after: " + code(c.After.Line()) + "\n")
		}
	}
	if rv.ManualReviewRequired {
		b.WriteString("- manual review token: " + code(rv.ReviewToken) + "\n")
	}
	b.WriteString("- report: " + code(rv.ReportPath) + "\n")
	if d := strings.TrimRight(rv.Diff, "\n"); d != "" {
		lines := strings.Split(d, "\n")
		if len(lines) > maxDiffLines {
			lines = append(lines[:maxDiffLines], "... (the report has the whole diff)")
		}
		b.WriteString("\n" + fence(".diff", strings.Join(lines, "\n")) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// changeMark is the one-letter status of a changed path.
func changeMark(k coretree.ChangeKind) string {
	switch k {
	case coretree.Added:
		return "A"
	case coretree.Deleted:
		return "D"
	}
	return "M"
}

// cmdRollback asks before it commits a new live revision with the tree of
// target (default: the previous revision).
func cmdRollback(_ context.Context, env Env, args string) (Outcome, error) {
	if strings.Contains(args, " ") {
		return Outcome{}, usageBecause("rollback", "takes one target revision at most")
	}
	h := env.Host()
	live, previous, err := h.CoreRevisions()
	if err != nil {
		return Outcome{}, err
	}
	target := args
	if target == "" || target == "previous" {
		if previous == "" {
			return Outcome{}, demiurge.Errorf(demiurge.ENOTFOUND, "rollback failed: no previous core revision recorded")
		}
		target = previous
	}
	q := "Roll the agents tree back from " + short(live) + " to " + short(target) + "? Every core changes with it, from the next turn."
	return Outcome{Confirm: &Confirm{Question: q,
		OnYes: func(ctx context.Context) (Outcome, error) {
			res, err := h.Rollback(ctx, target, reasonRollback)
			if err != nil {
				return Outcome{Notice: "rollback failed: " + escapeInline(oneLine(demiurge.ErrorMessage(err))), Level: LevelError}, nil
			}
			return notice("rollback committed: " + code(short(res.Revision)) + "  \nprevious: " + code(orText(short(res.Previous), "(none)"))), nil
		},
		OnNo: func(context.Context) (Outcome, error) {
			return notice("No rollback: live stays " + short(live) + "."), nil
		},
	}}, nil
}
