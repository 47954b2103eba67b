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
	summary       string // the session's compaction summary ("" for none)
	contributions []demiurge.Contribution
	history       []demiurge.Message
}

// systemText is the leading system layers: soul, skill index, bootstrap
// snapshot, system context, compaction summary.
func (l contextLayers) systemText() string {
	var systems []string
	for _, s := range []string{l.soul, l.skills, l.bootstrap, l.system, l.summary} {
		if strings.TrimSpace(s) != "" {
			systems = append(systems, s)
		}
	}
	return strings.Join(systems, "\n")
}

// assemble builds the provider messages in this order: soul,
// skill index, bootstrap snapshot, system context, compaction summary;
// pre-history contributions; the selected session history (replayed);
// pre-current-user contributions; the user message; post-current-user
// contributions; this turn's assistant and tool messages. Every system
// message is then merged into one leading message. stable is the number
// of leading messages that do not change from step to step (the system
// message, pre-history contributions and history): the prompt-cache
// prefix.
func assemble(l contextLayers, history []demiurge.ModelMessage, userText string, inTurn []demiurge.ModelMessage) (msgs []demiurge.ModelMessage, stable int) {
	var systems []string
	if s := l.systemText(); s != "" {
		systems = append(systems, s)
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
	rest = append(rest, history...)
	stableRest := len(rest)
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
	for i, m := range rest {
		if m.Role != demiurge.RoleSystem {
			out = append(out, m)
		}
		if i == stableRest-1 {
			stable = len(out)
		}
	}
	if stableRest == 0 && len(systems) > 0 {
		stable = 1
	}
	return out, stable
}

// replay turns persisted history into provider messages. Assistant steps get
// their tool calls back from metadata; a tool message whose assistant call is
// not in the window is dropped, so the window never starts mid-exchange.
func replay(history []demiurge.Message) []demiurge.ModelMessage {
	var out []demiurge.ModelMessage
	open := map[string]bool{} // tool call ids announced by an assistant message in the window
	for _, m := range history {
		if mm, ok := replayOne(m, open); ok {
			out = append(out, mm)
		}
	}
	return out
}

// replayOne is one message of replay; open holds the tool call ids
// announced so far.
func replayOne(m demiurge.Message, open map[string]bool) (demiurge.ModelMessage, bool) {
	switch m.Role {
	case demiurge.RoleAssistant:
		calls := toolCallsOf(m.Content.Metadata)
		if strings.TrimSpace(m.Content.Text) == "" && len(calls) == 0 {
			return demiurge.ModelMessage{}, false
		}
		for _, c := range calls {
			open[c.ID] = true
		}
		return demiurge.ModelMessage{Role: m.Role, Content: m.Content.Text, ToolCalls: calls}, true
	case demiurge.RoleTool:
		id, _ := m.Content.Metadata["tool_call_id"].(string)
		if !open[id] {
			return demiurge.ModelMessage{}, false
		}
		name, _ := m.Content.Metadata["tool_name"].(string)
		return demiurge.ModelMessage{Role: m.Role, Content: m.Content.Text, ToolCallID: id, Name: name}, true
	case demiurge.RoleUser, demiurge.RoleSystem:
		if strings.TrimSpace(m.Content.Text) == "" {
			return demiurge.ModelMessage{}, false
		}
		return demiurge.ModelMessage{Role: m.Role, Content: m.Content.Text}, true
	}
	return demiurge.ModelMessage{}, false
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
