package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/host"
)

// newEvolveCmd is `demiurge core evolve`: start a run (the evolver core
// edits an isolated copy of the live tree), review its proposal, promote
// it to live, or discard it.
func newEvolveCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	cmd := &cobra.Command{Use: "evolve", Short: "Propose, review, promote and discard core changes made by the evolver"}
	cmd.AddCommand(
		newEvolveStartCmd(g, streams, asJSON),
		newEvolveReviewCmd(g, streams, asJSON),
		newEvolvePromoteCmd(g, streams, asJSON),
		newEvolveDiscardCmd(g, streams, asJSON),
	)
	return cmd
}

func newEvolveStartCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var fakeScript string
	cmd := &cobra.Command{
		Use:   "start GOAL...",
		Short: "Run the evolver on an isolated copy of the live tree for the --core core",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			goal := strings.TrimSpace(strings.Join(args, " "))
			if goal == "" {
				return usageError("goal is required")
			}
			ctx := cmd.Context()
			h, err := openHost(ctx, g, fakeScript)
			if err != nil {
				return err
			}
			defer closeHost(ctx, h)
			res, err := h.EvolveStart(ctx, coreOr(g.core, h.DefaultCore()), goal, host.EvolveStartOptions{})
			if err != nil {
				return startError(err)
			}
			res.ChangedFiles = nonNilChanges(res.ChangedFiles)
			if res.Gates == nil {
				res.Gates = []coregate.Gate{}
			}
			if res.CleanedArtifacts == nil {
				res.CleanedArtifacts = []string{}
			}
			if *asJSON {
				return writeJSON(streams.Out, res)
			}
			printf(streams, "%s\n", res.Summary)
			for _, c := range res.ChangedFiles {
				printf(streams, "  %s %s\n", changeMark(c.Kind), c.Path)
			}
			if res.Evolver.Summary != "" {
				printf(streams, "evolver: %s\n", oneLine(res.Evolver.Summary))
			}
			printf(streams, "report: %s\n", res.ReportPath)
			if len(res.ChangedFiles) > 0 {
				printf(streams, "next: demiurge core evolve review %s\n", res.RunID)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&fakeScript, "fake-script", "", "fake provider script for the evolver (env DEMIURGE_FAKE_SCRIPT)")
	return cmd
}

// startError gives a failed start its exit code: a core that does not
// load or does not exist keeps the configuration exit code (2), while a
// repository refusal (a failed gate of the local edits saved first, a run
// already going) is a refused operation (1).
func startError(err error) error {
	var gate *coregate.GateError
	if errors.As(err, &gate) {
		return &exitError{code: ExitFailed, err: err}
	}
	return err
}

func newEvolveReviewCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "review RUN",
		Short: "Commit a run's proposal and run the gates (exit 1 when a gate fails)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRepo(cmd.Context(), g, func(ctx context.Context, repo *corerepo.Repo) error {
				rv, err := repo.Review(ctx, args[0], corerepo.ReviewOptions{Reason: reason})
				if err != nil {
					return err
				}
				normalizeReview(rv)
				if *asJSON {
					if err := writeJSON(streams.Out, rv); err != nil {
						return err
					}
				} else {
					printReview(streams, rv)
				}
				if !rv.Passed {
					return failed()
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "cli review", "reason recorded in the proposal commit message")
	return cmd
}

func printReview(streams IO, rv *corerepo.Review) {
	verdict := "failed"
	if rv.Passed {
		verdict = "passed"
	}
	printf(streams, "review %s: %s\n", rv.RunID, verdict)
	rev := ""
	if rv.ProposalRevision != nil {
		rev = *rv.ProposalRevision
	}
	printf(streams, "proposal revision: %s\n", orNone(rev))
	printf(streams, "base revision: %s\n", rv.BaseRevision)
	if rv.Stale {
		printf(streams, "stale: live is now %s; promotion will be refused\n", rv.LiveRevision)
	}
	for _, c := range rv.ChangedFiles {
		printf(streams, "  %s %s\n", changeMark(c.Kind), c.Path)
	}
	for _, gt := range rv.Gates {
		if !gt.Passed {
			printf(streams, "gate %s failed: %s\n", gt.Phase, gt.Detail)
		}
	}
	for _, c := range rv.ApprovalChanges {
		printf(streams, "approval change: %s\n", c.String())
	}
	for _, c := range rv.MCPChanges {
		printf(streams, "mcp change: %s %s\n", c.Change, c.Path)
		if c.Before != nil {
			printf(streams, "  before: %s\n", c.Before.Line())
		}
		if c.After != nil {
			printf(streams, "  after:  %s\n", c.After.Line())
		}
	}
	if rv.ManualReviewRequired {
		printf(streams, "manual review token: %s\n", rv.ReviewToken)
	}
	printf(streams, "report: %s\n", rv.ReportPath)
}

func newEvolvePromoteCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var opts corerepo.PromoteOptions
	cmd := &cobra.Command{
		Use:   "promote RUN",
		Short: "Make a reviewed proposal the live revision (exit 1 when not promoted)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runID := args[0]
			return withRepo(cmd.Context(), g, func(ctx context.Context, repo *corerepo.Repo) error {
				res, err := repo.Promote(ctx, runID, opts)
				if err != nil {
					if *asJSON {
						_ = writeJSON(streams.Out, promoteRefusal{RunID: runID, Summary: oneLine(errorJSON(err).Message), Error: errorJSON(err)})
					}
					return err
				}
				if res.AffectedCores == nil {
					res.AffectedCores = []string{}
				}
				if res.Review != nil {
					normalizeReview(res.Review)
				}
				if *asJSON {
					if err := writeJSON(streams.Out, res); err != nil {
						return err
					}
				} else {
					printPromote(streams, res)
				}
				if !res.Promoted {
					return failed()
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&opts.Token, "manual-review-token", "", "the review token, when the proposal changes MCP declarations or loosens approval")
	cmd.Flags().StringVar(&opts.Reason, "reason", "cli promote", "reason recorded with the promotion")
	return cmd
}

// promoteRefusal is `core evolve promote --json` when the repository
// refused the promotion with an error (a stale proposal, a busy lock,
// unsaved local edits, an unknown run).
type promoteRefusal struct {
	RunID       string       `json:"run_id"`
	Promoted    bool         `json:"promoted"`
	NewRevision *string      `json:"new_revision"`
	Summary     string       `json:"summary"`
	Error       *errorOutput `json:"error"`
}

func printPromote(streams IO, res *corerepo.PromoteResult) {
	printf(streams, "%s\n", res.Summary)
	if res.Promoted {
		if res.NewRevision != nil {
			printf(streams, "new revision: %s\n", *res.NewRevision)
		}
		printf(streams, "takes effect next turn\n")
		return
	}
	rv := res.Review
	if rv == nil {
		return
	}
	for _, gt := range rv.Gates {
		if !gt.Passed {
			printf(streams, "gate %s failed: %s\n", gt.Phase, gt.Detail)
		}
	}
	if rv.ManualReviewRequired {
		// The token is not repeated here: the operator reads the changes
		// with `review` and passes the token shown there.
		printf(streams, "inspect the changes with `demiurge core evolve review %s`, then pass its manual review token with --manual-review-token\n", res.RunID)
	}
}

func newEvolveDiscardCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "discard RUN",
		Short: "Remove an evolve run and its proposal",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRepo(cmd.Context(), g, func(ctx context.Context, repo *corerepo.Repo) error {
				if err := repo.DiscardRun(ctx, args[0]); err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(streams.Out, map[string]any{"run_id": args[0], "discarded": true})
				}
				printf(streams, "discarded evolve run %s\n", args[0])
				return nil
			})
		},
	}
}

// normalizeReview keeps the review's JSON lists as [] rather than null.
func normalizeReview(rv *corerepo.Review) {
	rv.ChangedFiles = nonNilChanges(rv.ChangedFiles)
	if rv.Gates == nil {
		rv.Gates = []coregate.Gate{}
	}
	if rv.MCPChanges == nil {
		rv.MCPChanges = []coregate.MCPChange{}
	}
	if rv.ApprovalChanges == nil {
		rv.ApprovalChanges = []coregate.ApprovalChange{}
	}
	if rv.CleanedArtifacts == nil {
		rv.CleanedArtifacts = []string{}
	}
}
