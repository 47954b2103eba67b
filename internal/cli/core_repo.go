package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

func newCoreStatusCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the live revision and the local edits of the agents tree",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRepo(cmd.Context(), g, func(_ context.Context, repo *corerepo.Repo) error {
				st, err := repo.Status()
				if err != nil {
					return err
				}
				prev, err := repo.Previous()
				if err != nil {
					return err
				}
				out := statusJSON{Revision: st.Revision, Previous: prev, Clean: st.Clean, Changes: nonNilChanges(st.Changes)}
				if *asJSON {
					return writeJSON(streams.Out, out)
				}
				printf(streams, "live revision: %s\nprevious revision: %s\n", out.Revision, orNone(out.Previous))
				if out.Clean {
					printf(streams, "no local edits\n")
					return nil
				}
				printf(streams, "local edits (saved before the next turn, or `demiurge core save`):\n")
				for _, c := range out.Changes {
					printf(streams, "  %s %s\n", changeMark(c.Kind), c.Path)
				}
				return nil
			})
		},
	}
}

type statusJSON struct {
	Revision string            `json:"revision"`
	Previous string            `json:"previous_revision"`
	Clean    bool              `json:"clean"`
	Changes  []coretree.Change `json:"changes"`
}

func newCoreVersionsCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "versions",
		Short: "List revisions of the live history, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return usageError("--limit must be at least 1")
			}
			return withRepo(cmd.Context(), g, func(_ context.Context, repo *corerepo.Repo) error {
				vs, err := repo.Versions(limit)
				if err != nil {
					return err
				}
				if vs == nil {
					vs = []corerepo.Version{}
				}
				if *asJSON {
					return writeJSON(streams.Out, vs)
				}
				tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "REVISION\tTIME\tREF\tSUMMARY")
				for _, v := range vs {
					mark := "-"
					switch {
					case v.Live:
						mark = "live"
					case v.Previous:
						mark = "previous"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", short(v.Revision), v.Time, mark, v.Summary)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 30, "how many revisions")
	return cmd
}

func newCoreDiffCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "diff",
		Short: "Show the local edits against the live revision (credentials redacted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRepo(cmd.Context(), g, func(_ context.Context, repo *corerepo.Repo) error {
				d, err := repo.Diff()
				if err != nil {
					return err
				}
				d.Changes = nonNilChanges(d.Changes)
				if *asJSON {
					return writeJSON(streams.Out, d)
				}
				if len(d.Changes) == 0 {
					printf(streams, "no local edits\n")
					return nil
				}
				printf(streams, "%s", d.Diff)
				if d.Diff != "" && !strings.HasSuffix(d.Diff, "\n") {
					printf(streams, "\n")
				}
				return nil
			})
		},
	}
}

func newCoreSaveCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var opts corerepo.SaveOptions
	cmd := &cobra.Command{
		Use:   "save",
		Short: "Save the local edits as a new live revision (after the gates)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRepo(cmd.Context(), g, func(ctx context.Context, repo *corerepo.Repo) error {
				res, err := repo.Save(ctx, opts)
				if err != nil {
					if *asJSON {
						writeJSON(streams.Out, saveRefusal(repo, err))
					}
					return err
				}
				res.Changes = nonNilChanges(res.Changes)
				if *asJSON {
					return writeJSON(streams.Out, res)
				}
				if !res.Saved {
					printf(streams, "no local edits; live revision %s\n", res.Revision)
					return nil
				}
				printf(streams, "saved %s: %s\n", short(res.Revision), res.Summary)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&opts.Confirm, "confirm", "", "operator token confirming an edit that loosens approval or grants capabilities")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "reason recorded in the commit message")
	return cmd
}

// saveJSONRefusal is `core save --json` when the save was refused: the
// gates that ran and, when approval_security asked for it, the token that
// `--confirm` takes.
type saveJSONRefusal struct {
	Saved        bool            `json:"saved"`
	Revision     string          `json:"revision"`
	Gates        []coregate.Gate `json:"gates"`
	ConfirmToken string          `json:"confirm_token,omitempty"`
	Error        *errorOutput    `json:"error"`
}

func saveRefusal(repo *corerepo.Repo, err error) saveJSONRefusal {
	out := saveJSONRefusal{Gates: []coregate.Gate{}, Error: errorJSON(err)}
	out.Revision, _ = repo.Live()
	var gate *coregate.GateError
	if errors.As(err, &gate) {
		out.Gates, out.ConfirmToken = gate.Gates, gate.Token
	}
	return out
}

func newCoreCheckCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run the core repository consistency check (exit 1 on findings)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRepo(cmd.Context(), g, func(_ context.Context, repo *corerepo.Repo) error {
				out := checkJSON{Findings: repo.Check()}
				if repair && len(out.Findings) > 0 {
					out.Repaired = true
					remaining, err := repo.Repair()
					if err != nil {
						return err
					}
					out.Findings = remaining
				}
				if out.Findings == nil {
					out.Findings = []gitrepo.Finding{}
				}
				out.Consistent = len(out.Findings) == 0
				if *asJSON {
					if err := writeJSON(streams.Out, out); err != nil {
						return err
					}
				} else {
					if out.Repaired {
						printf(streams, "repair ran\n")
					}
					if out.Consistent {
						printf(streams, "core repository is consistent\n")
					}
					for _, f := range out.Findings {
						printf(streams, "%s: %s\n", f.Code, f.Message)
					}
				}
				if !out.Consistent {
					return failed()
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "fix the findings a safe fix exists for (a checkout that disagrees with live loses its local edits)")
	return cmd
}

type checkJSON struct {
	Consistent bool              `json:"consistent"`
	Repaired   bool              `json:"repaired"`
	Findings   []gitrepo.Finding `json:"findings"`
}

func newCoreDiscardCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "discard --yes",
		Short: "Discard the local edits: restore the live revision's files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !yes {
				return usageError("discard requires --yes")
			}
			return withRepo(cmd.Context(), g, func(ctx context.Context, repo *corerepo.Repo) error {
				undone, err := repo.Discard(ctx)
				if err != nil {
					return err
				}
				live, err := repo.Live()
				if err != nil {
					return err
				}
				out := discardJSON{Revision: live, Discarded: nonNilChanges(undone)}
				if *asJSON {
					return writeJSON(streams.Out, out)
				}
				if len(out.Discarded) == 0 {
					printf(streams, "no local edits\n")
					return nil
				}
				for _, c := range out.Discarded {
					printf(streams, "discarded %s %s\n", changeMark(c.Kind), c.Path)
				}
				printf(streams, "agents tree is at live revision %s\n", short(live))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm that the local edits are to be lost")
	return cmd
}

type discardJSON struct {
	Revision  string            `json:"revision"`
	Discarded []coretree.Change `json:"discarded"`
}

func newCoreRollbackCmd(g *globals, streams IO, asJSON *bool) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "rollback [REV]",
		Short: "Make a new live revision with the tree of REV (default: the previous revision)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target := "previous"
			if len(args) == 1 {
				target = args[0]
			}
			return withRepo(cmd.Context(), g, func(ctx context.Context, repo *corerepo.Repo) error {
				res, err := repo.Rollback(ctx, target, reason)
				if err != nil {
					return err
				}
				if res.AffectedCores == nil {
					res.AffectedCores = []string{}
				}
				if *asJSON {
					return writeJSON(streams.Out, res)
				}
				printf(streams, "rollback committed: %s (takes effect next turn)\n", short(res.Revision))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "cli rollback", "reason recorded in the commit message")
	return cmd
}
