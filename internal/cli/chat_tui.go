package cli

import (
	"context"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/demiurge/demiurge/internal/tui"
)

// wantsTUI reports whether chat opens the terminal UI: both stdin and
// stdout are terminals and --line was not given. Anything else (a pipe, a
// file, a script) keeps the line mode.
func wantsTUI(streams IO, f chatFlags) bool {
	return !f.line && isTerminal(streams.In) && isTerminalWriter(streams.Out)
}

func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runTUI runs the terminal UI on the chat's Host. --approve keeps its
// meaning: ask (the default on a terminal) asks in the approval panel.
func runTUI(ctx context.Context, g *globals, streams IO, f chatFlags) error {
	mode, err := approvalMode(f.approve, streams.In)
	if err != nil {
		return err
	}
	h, err := openServingHost(ctx, g, f.fakeScript)
	if err != nil {
		return err
	}
	defer closeHost(ctx, h)
	workspace, err := g.workspace(ctx, h, f.workspace)
	if err != nil {
		return err
	}
	h.StartScheduler()
	return tui.Run(ctx, tui.Options{
		Host: h, CoreID: g.core, Workspace: workspace, Provider: f.provider, Model: f.model,
		SessionID: f.session, Approve: mode, In: streams.In, Out: streams.Out,
	})
}
