package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

type chatFlags struct {
	provider   string
	model      string
	fakeScript string
	workspace  string
	session    string
	approve    string
	line       bool
}

func newChatCmd(g *globals, streams IO) *cobra.Command {
	f := chatFlags{}
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to a core interactively (also: bare demiurge)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChat(cmd.Context(), g, streams, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "provider: fake, openai, anthropic, a config profile, or auto")
	fl.StringVar(&f.model, "model", "", "model name")
	fl.StringVar(&f.fakeScript, "fake-script", "", "fake provider script (env DEMIURGE_FAKE_SCRIPT)")
	fl.StringVar(&f.workspace, "workspace", "", "workspace directory (env DEMIURGE_WORKSPACE, default the current directory)")
	fl.StringVar(&f.session, "session", "", "resume this session")
	fl.StringVar(&f.approve, "approve", "", "approvals: ask, deny or all (default ask on a terminal, deny otherwise)")
	fl.BoolVar(&f.line, "line", false, "line mode even on a terminal (the terminal UI is the default there)")
	return cmd
}

const chatHelp = `Commands: /new (fresh session), /resume ID, /sessions, /help, /exit`

// chat is the state of one interactive loop.
type chat struct {
	h          *host.Host
	g          *globals
	streams    IO
	f          chatFlags
	workspace  string
	sessionID  string // the session of the next turn ("" = the CLI conversation's)
	newSession bool
	route      *printRoute
	out        *chatOut
	approver   effect.Approver
}

// runChat is the chat loop. One line source reads stdin for the whole
// chat: the conversation and the approval questions both take their lines
// from it, so an answer always goes to the question on screen. On a
// terminal the default is to ask every approval; off one it is deny
// (the CLI contract), and --approve ask reads each answer as the next input line.
func runChat(ctx context.Context, g *globals, streams IO, f chatFlags) error {
	if wantsTUI(streams, f) {
		return runTUI(ctx, g, streams, f)
	}
	terminal := isTerminal(streams.In)
	mode, err := approvalMode(f.approve, streams.In)
	if err != nil {
		return err
	}
	out := &chatOut{w: streams.Out, terminal: terminal}
	lines := newLineSource(streams.In)
	defer lines.Close()
	approver := approverFor(mode, func() *lineSource { return lines }, streams.Err, out.endLine)

	h, err := openServingHost(ctx, g, f.fakeScript)
	if err != nil {
		return err
	}
	defer closeHost(ctx, h)
	workspace, err := g.workspace(ctx, h, f.workspace)
	if err != nil {
		return err
	}
	// The interactive Host also fires the cores' schedules.
	h.StartScheduler()

	c := &chat{h: h, g: g, streams: streams, f: f, workspace: workspace, sessionID: f.session,
		route: &printRoute{out: out}, out: out, approver: approver}
	if terminal {
		fmt.Fprintf(out, "demiurge chat · core %s · home %s\n%s\n", coreOr(g.core, h.DefaultCore()), h.Home().Dir, chatHelp)
	}
	for {
		if terminal {
			fmt.Fprint(out, "\n> ")
		}
		l, err := lines.Next(ctx)
		if terminal {
			out.typed()
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		text := strings.TrimSpace(l.text)
		if text == "" {
			continue
		}
		quit, cerr := c.handle(ctx, text)
		if cerr != nil {
			out.endLine()
			fmt.Fprintf(streams.Err, "demiurge: %s\n", oneLine(demiurge.ErrorMessage(cerr)))
		}
		if quit || ctx.Err() != nil {
			return nil
		}
	}
}

func coreOr(flag, def string) string {
	if flag != "" {
		return flag
	}
	return def
}

// handle runs one line: a slash command or a turn. quit reports whether
// the loop should end.
func (c *chat) handle(ctx context.Context, line string) (quit bool, err error) {
	if strings.HasPrefix(line, "/") {
		return c.command(ctx, line)
	}
	var streamed strings.Builder
	c.route.setStreamed("")
	req := turn.Request{
		CoreID: c.g.core, Text: line, SessionID: c.sessionID, NewSession: c.newSession,
		Workspace: c.workspace, Provider: c.f.provider, Model: c.f.model, Route: c.route,
		Approver: c.approver, OnToolCall: c.out.toolCall,
		Stream: func(delta string) {
			streamed.WriteString(delta)
			c.route.setStreamed(streamed.String())
			io.WriteString(c.out, delta)
		},
	}
	res, err := c.h.Run(ctx, req)
	if err != nil {
		return false, err
	}
	c.newSession = false
	c.sessionID = res.SessionID
	if streamed.Len() == 0 && res.Text != "" {
		io.WriteString(c.out, res.Text)
	}
	c.out.endLine()
	if res.Error != nil {
		fmt.Fprintf(c.streams.Err, "turn %s: %s\n", res.Outcome, res.Error.Message)
	}
	return false, nil
}

func (c *chat) command(ctx context.Context, line string) (bool, error) {
	fields := strings.Fields(line)
	switch fields[0] {
	case "/exit", "/quit":
		return true, nil
	case "/help":
		fmt.Fprintln(c.out, chatHelp)
	case "/new":
		c.forget(c.sessionID)
		c.newSession, c.sessionID = true, ""
		fmt.Fprintln(c.out, "(the next message starts a fresh session)")
	case "/resume":
		if len(fields) != 2 {
			return false, demiurge.Errorf(demiurge.EINVALID, "usage: /resume SESSION_ID")
		}
		if _, err := c.h.Session(ctx, fields[1]); err != nil {
			return false, err
		}
		if fields[1] != c.sessionID {
			c.forget(c.sessionID)
		}
		c.newSession, c.sessionID = false, fields[1]
		fmt.Fprintf(c.out, "(resumed %s)\n", fields[1])
	case "/sessions":
		list, err := c.h.ListSessions(ctx, coreOr(c.g.core, c.h.DefaultCore()), 20)
		if err != nil {
			return false, err
		}
		writeSessionTable(c.out, list, c.sessionID)
	default:
		return false, demiurge.Errorf(demiurge.EINVALID, "unknown command: %s (%s)", fields[0], chatHelp)
	}
	return false, nil
}

// forget drops the session grants of a session the chat leaves: "always
// allow for this session" never outlives the operator's use of it.
func (c *chat) forget(sessionID string) {
	if sessionID != "" {
		c.h.ForgetSession(sessionID)
	}
}
