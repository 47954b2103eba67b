package gateway

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge"
)

// helpText lists the channel commands (spec surfaces §3.3, the part a
// text channel has).
const helpText = "# Commands\n" +
	"- `/help` - this list\n" +
	"- `/new` - start a new session for this conversation\n" +
	"- `/sessions [limit]` - the sessions of this conversation\n" +
	"- `/resume <number|session_id>` - continue one of them\n" +
	"- `/stop` - stop the running turn and clear queued messages\n" +
	"- `/queue <prompt>` - queue a prompt behind the running turn\n" +
	"- `/ask <text>` - send text that starts with a slash"

// surfaceOnly are commands of other surfaces (the terminal UI, Telegram)
// that a text channel does not offer.
var surfaceOnly = map[string]bool{"status": true, "tools": true, "skills": true, "skill": true, "busy": true, "subagents": true}

// command answers one channel command of in's conversation; the answer is
// sent as plain text. It never starts a turn.
func (g *Gateway) command(ctx context.Context, in demiurge.Inbound, name, arg string) string {
	switch name {
	case "help":
		return helpText
	case "ask", "queue":
		return fmt.Sprintf("Usage: `/%s <prompt>`", name)
	case "new":
		id, err := g.run.NewSession(ctx, in)
		if err != nil {
			return "Could not start a new session: " + g.redact(err)
		}
		return "New session: `" + id + "`"
	case "stop":
		s := g.takeStop(ctx, in)
		if s.turn {
			return fmt.Sprintf("Stopped current turn; cleared %d queued message(s).", s.cleared)
		}
		return fmt.Sprintf("No running turn; cleared %d queued message(s).", s.cleared)
	case "sessions":
		limit := 10
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 || n > 100 {
				return "Usage: `/sessions [limit]` (1-100)"
			}
			limit = n
		}
		list, current, err := g.run.Sessions(ctx, in, limit)
		if err != nil {
			return "Could not list sessions: " + g.redact(err)
		}
		return sessionList(list, current)
	case "resume":
		if arg == "" {
			list, current, err := g.run.Sessions(ctx, in, 10)
			if err != nil {
				return "Could not list sessions: " + g.redact(err)
			}
			return sessionList(list, current) + "\n\nUse `/resume <number|session_id>`."
		}
		id := arg
		if n, err := strconv.Atoi(arg); err == nil {
			list, _, err := g.run.Sessions(ctx, in, 100)
			if err != nil {
				return "Could not list sessions: " + g.redact(err)
			}
			if n < 1 || n > len(list) {
				return fmt.Sprintf("Session number out of range: %d", n)
			}
			id = list[n-1].ID
		}
		if err := g.run.Resume(ctx, in, id); err != nil {
			if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
				return "Session not found or not authorized."
			}
			return "Could not resume the session: " + g.redact(err)
		}
		return "Resumed session: `" + id + "`"
	}
	if surfaceOnly[name] {
		return "Command not available: /" + name
	}
	return "Unknown command: /" + name
}

// sessionList renders /sessions: `<n>. <*| > `<id>` - <updated_at> - <count> msg[ - <preview>]`.
func sessionList(list []demiurge.Session, current string) string {
	if len(list) == 0 {
		return "No sessions found."
	}
	var b strings.Builder
	b.WriteString("# Sessions")
	for i, s := range list {
		mark := " "
		if s.ID == current {
			mark = "*"
		}
		fmt.Fprintf(&b, "\n%d. %s `%s` - %s - %d msg", i+1, mark, s.ID, demiurge.FormatTime(s.UpdatedAt), s.MessageCount)
		if p := strings.TrimSpace(s.Preview); p != "" {
			b.WriteString(" - " + p)
		}
	}
	return b.String()
}
