package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// runGCPercent is the collector's pace during `run`: the heap may grow to
// five times what is live before a collection.
const runGCPercent = 400

type runFlags struct {
	provider   string
	model      string
	fakeScript string
	workspace  string
	newSession bool
	session    string
	approve    string
	waitTasks  bool
	json       bool
}

func newRunCmd(g *globals, streams IO) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] TEXT...",
		Short: "Run one turn non-interactively ('-' reads the text from stdin)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOnce(cmd, g, streams, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "provider: fake, openai, anthropic, a config profile, or auto")
	fl.StringVar(&f.model, "model", "", "model name")
	fl.StringVar(&f.fakeScript, "fake-script", "", "fake provider script (env DEMIURGE_FAKE_SCRIPT)")
	fl.StringVar(&f.workspace, "workspace", "", "workspace directory (env DEMIURGE_WORKSPACE, default the current directory)")
	fl.BoolVar(&f.newSession, "new", false, "start a fresh session")
	fl.StringVar(&f.session, "session", "", "resume this session")
	fl.StringVar(&f.approve, "approve", "", "approvals: ask, deny or all (default ask on a terminal, deny otherwise)")
	fl.BoolVar(&f.waitTasks, "wait-tasks", false, "wait for detached tasks started by the turn before exiting")
	fl.BoolVar(&f.json, "json", false, "print one JSON object")
	return cmd
}

func runOnce(cmd *cobra.Command, g *globals, streams IO, f *runFlags, args []string) error {
	if f.newSession && f.session != "" {
		return usageError("--new and --session cannot be used together")
	}
	text := strings.Join(args, " ")
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(streams.In)
		if err != nil {
			return usageError("read stdin: %v", err)
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return usageError("run needs a non-empty TEXT")
	}
	approver, err := newApprover(f.approve, streams)
	if err != nil {
		return err
	}
	// One turn allocates a few MiB and the process ends: collecting at the
	// default pace spends some 5 % of its processor time on memory it is
	// about to return anyway. The pace is restored for an in-process caller.
	defer debug.SetGCPercent(debug.SetGCPercent(runGCPercent))
	ctx := cmd.Context()
	h, err := openRunHost(ctx, g, f.fakeScript)
	if err != nil {
		return err
	}
	defer closeHost(ctx, h)
	workspace, err := g.workspace(ctx, h, f.workspace)
	if err != nil {
		return err
	}

	res, err := h.Run(ctx, turn.Request{
		CoreID: g.core, Text: text, SessionID: f.session, NewSession: f.newSession,
		Workspace: workspace, Provider: f.provider, Model: f.model,
		Route: &collectRoute{}, Approver: approver,
	})
	if err != nil {
		return err
	}
	// Without --wait-tasks, closing the Host cancels what the turn left
	// running (recorded as cancelled); with it, every task this Host runs
	// (children of children included) finishes first.
	if f.waitTasks {
		if err := h.WaitTasks(ctx); err != nil {
			return err
		}
	} else if err := h.CancelTasks(ctx); err != nil {
		return err
	}
	if f.json {
		// Only the JSON output lists the turn's tasks: the plain answer
		// does not read them.
		tasks, err := h.TurnTasks(ctx, res.SessionID, res.TurnID)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(streams.Out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(runJSON(res, tasks)); err != nil {
			return err
		}
	} else if res.Text != "" {
		io.WriteString(streams.Out, strings.TrimRight(res.Text, "\n")+"\n")
	}
	switch res.Outcome {
	case turn.OutcomeCompleted, turn.OutcomeNeedsUser:
		return nil
	}
	if !f.json && res.Error != nil {
		return &exitError{code: ExitFailed, err: demiurge.Errorf(res.Error.Code, "turn %s %s: %s", res.TurnID, res.Outcome, res.Error.Message)}
	}
	return failed()
}

// workspace applies --workspace, then DEMIURGE_WORKSPACE, then the core's
// runtime.workspace (a core that names its workspace works there), then
// the current directory.
func (g *globals) workspace(ctx context.Context, h *host.Host, flag string) (string, error) {
	ws := flag
	if ws == "" {
		ws = g.getenv("DEMIURGE_WORKSPACE")
	}
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", usageError("cannot read the current directory: %v", err)
		}
		if ws, err = h.Workspace(ctx, g.core, wd); err != nil {
			return "", err
		}
	}
	st, err := os.Stat(ws)
	if err != nil || !st.IsDir() {
		return "", usageError("workspace %s is not a directory", ws)
	}
	return ws, nil
}
