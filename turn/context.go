package turn

import (
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// contextLayers are the inputs of context assembly for one turn.
type contextLayers struct {
	soul          string
	skills        string
	bootstrap     string
	system        string
	contributions []demiurge.Contribution
	history       []demiurge.Message
}

// assemble builds the provider messages in this order: soul,
// skill index, bootstrap snapshot, system context; pre-history
// contributions; session history; pre-current-user contributions; the user
// message; post-current-user contributions; this turn's assistant and tool
// messages. Every system message is then merged into one leading message.
func assemble(l contextLayers, userText string, inTurn []demiurge.ModelMessage) []demiurge.ModelMessage {
	var systems []string
	for _, s := range []string{l.soul, l.skills, l.bootstrap, l.system} {
		if strings.TrimSpace(s) != "" {
			systems = append(systems, s)
		}
	}
	var rest []demiurge.ModelMessage
	add := func(placement string) {
		for _, c := range l.contributions {
			if c.Placement == placement && strings.TrimSpace(c.Text) != "" {
				rest = append(rest, demiurge.ModelMessage{Role: c.Role, Content: c.Text})
			}
		}
	}
	add(demiurge.PlacementPreHistory)
	rest = append(rest, replay(l.history)...)
	add(demiurge.PlacementPreCurrentUser)
	rest = append(rest, demiurge.ModelMessage{Role: demiurge.RoleUser, Content: userText})
	add(demiurge.PlacementPostCurrentUser)
	rest = append(rest, inTurn...)

	out := make([]demiurge.ModelMessage, 0, len(rest)+1)
	for _, m := range rest {
		if m.Role == demiurge.RoleSystem {
			systems = append(systems, m.Content)
		}
	}
	if len(systems) > 0 {
		out = append(out, demiurge.ModelMessage{Role: demiurge.RoleSystem, Content: strings.Join(systems, "\n")})
	}
	for _, m := range rest {
		if m.Role != demiurge.RoleSystem {
			out = append(out, m)
		}
	}
	return out
}

// replay turns persisted history into provider messages. Assistant steps get
// their tool calls back from metadata; a tool message whose assistant call is
// not in the window is dropped, so the window never starts mid-exchange.
func replay(history []demiurge.Message) []demiurge.ModelMessage {
	var out []demiurge.ModelMessage
	open := map[string]bool{} // tool call ids announced by an assistant message in the window
	for _, m := range history {
		switch m.Role {
		case demiurge.RoleAssistant:
			calls := toolCallsOf(m.Content.Metadata)
			if strings.TrimSpace(m.Content.Text) == "" && len(calls) == 0 {
				continue
			}
			for _, c := range calls {
				open[c.ID] = true
			}
			out = append(out, demiurge.ModelMessage{Role: m.Role, Content: m.Content.Text, ToolCalls: calls})
		case demiurge.RoleTool:
			id, _ := m.Content.Metadata["tool_call_id"].(string)
			if !open[id] {
				continue
			}
			name, _ := m.Content.Metadata["tool_name"].(string)
			out = append(out, demiurge.ModelMessage{Role: m.Role, Content: m.Content.Text, ToolCallID: id, Name: name})
		case demiurge.RoleUser, demiurge.RoleSystem:
			if strings.TrimSpace(m.Content.Text) == "" {
				continue
			}
			out = append(out, demiurge.ModelMessage{Role: m.Role, Content: m.Content.Text})
		}
	}
	return out
}

func toolCallsOf(meta map[string]any) []demiurge.ToolCall {
	raw, _ := meta["tool_calls"].([]any)
	var out []demiurge.ToolCall
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		name, _ := m["name"].(string)
		args, _ := m["arguments"].(map[string]any)
		if name != "" {
			out = append(out, demiurge.ToolCall{ID: id, Name: name, Arguments: args})
		}
	}
	return out
}

// systemContext is the input phase's system text.
func systemContext(in demiurge.InputResult) string { return in.SystemContext }

// skillIndex renders the core's skills for the system layer.
func skillIndex(c *core.Core) string {
	if len(c.Skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills are available; read one with skill_view when it applies.\n<available_skills>\n")
	for _, s := range c.Skills {
		b.WriteString("- " + s.Name)
		if s.Category != "" {
			b.WriteString(" [" + s.Category + "]")
		}
		b.WriteString(": " + s.Description + "\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}
