package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/host"
)

// newCoreCmd is `demiurge core`: the core repository and evolution. Every
// subcommand takes --json.
//
// The repository subcommands open the repository alone, not the whole
// Host: they are the operator's repair tools and must work while a core or
// the global fallback fails to load. Only `core evolve start`, which runs
// the evolver core, opens the Host.
func newCoreCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "core", Short: "Inspect, save, discard and roll back core revisions; evolve cores"}
	var asJSON bool
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(
		newCoreStatusCmd(g, streams, &asJSON),
		newCoreVersionsCmd(g, streams, &asJSON),
		newCoreDiffCmd(g, streams, &asJSON),
		newCoreSaveCmd(g, streams, &asJSON),
		newCoreCheckCmd(g, streams, &asJSON),
		newCoreDiscardCmd(g, streams, &asJSON),
		newCoreRollbackCmd(g, streams, &asJSON),
		newEvolveCmd(g, streams, &asJSON),
	)
	return cmd
}

// withRepo initialises a missing home and opens its core repository (an
// interrupted revision switch is resolved by the open), then runs fn.
// Errors of fn are repository operation errors (see opError).
//
// On a PostgreSQL runtime database the repository is opened with it
// (host.OpenHomeRepo), so a save, promotion or rollback made here is
// what every Host of the ledger runs next.
func withRepo(ctx context.Context, g *globals, fn func(context.Context, *corerepo.Repo) error) error {
	repo, err := openRepo(ctx, g)
	if err != nil {
		return err
	}
	err = opError(fn(ctx, repo.Repo))
	if cerr := repo.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

func openRepo(ctx context.Context, g *globals) (*host.HomeRepo, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	h, err := host.InitHome(home)
	if err != nil {
		return nil, err
	}
	return host.OpenHomeRepo(ctx, h.Dir, g.getenv)
}

// opError gives a failed repository operation its exit code: the
// operation was refused or failed (exit 1: a gate, a conflict, an unknown
// run or revision), except a malformed argument, which is a usage error
// (exit 2). Errors already carrying an exit code keep it.
func opError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	var gate *coregate.GateError
	if !errors.As(err, &gate) && demiurge.ErrorCode(err) == demiurge.EINVALID {
		return &exitError{code: ExitUsage, err: err}
	}
	return &exitError{code: ExitFailed, err: err}
}

// errorJSON is the error member of a refusal printed with --json.
func errorJSON(err error) *errorOutput {
	return &errorOutput{Code: demiurge.ErrorCode(err), Message: demiurge.ErrorMessage(err)}
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// changeMark is the one-letter status of a changed path.
func changeMark(change coretree.ChangeKind) string {
	switch change {
	case coretree.Added:
		return "A"
	case coretree.Deleted:
		return "D"
	default:
		return "M"
	}
}

// nonNilChanges keeps JSON lists as [] rather than null.
func nonNilChanges(c []coretree.Change) []coretree.Change {
	if c == nil {
		return []coretree.Change{}
	}
	return c
}

func printf(streams IO, format string, args ...any) {
	fmt.Fprintf(streams.Out, format, args...)
}
