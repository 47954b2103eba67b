package tui

import (
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// history shows a resumed session: its visible messages and, where each
// tool message of a turn stands, that call's card as it ended. Calls whose
// end was never recorded (a turn cancelled mid-call) follow their turn's
// last message.
func (m *Model) history(msg historyMsg) {
	if msg.conversation {
		// The CLI conversation found at start: the operator may have
		// started a turn or switched session meanwhile.
		if m.sessionID != "" || m.newSession || m.seq > 0 {
			return
		}
		m.sessionID, m.status.sessionID = msg.sessionID, msg.sessionID
		m.eng.refresh(msg.sessionID)
		m.eng.watch(msg.sessionID)
	}
	if msg.sessionID != m.sessionID {
		return // the UI moved on meanwhile
	}
	if msg.err != nil {
		m.notice(levelError, errorText(msg.err))
		return
	}
	m.tr.clear()
	p := placer{m: m, calls: msg.calls}
	for _, h := range msg.msgs {
		if h.TurnID != p.turnID {
			p.flush()
			p.turnID = h.TurnID
		}
		if h.Role == demiurge.RoleTool {
			name, _ := h.Content.Metadata["tool_name"].(string)
			p.card(name)
			continue
		}
		text := strings.TrimSpace(h.Content.Text)
		if !h.Visible || text == "" {
			continue
		}
		switch h.Role {
		case demiurge.RoleUser:
			m.tr.add(&entry{kind: kindUser, text: clean(text)})
			m.comp.remember(text)
		case demiurge.RoleAssistant:
			m.tr.add(&entry{kind: kindAssistant, text: clean(text)})
		case demiurge.RoleSystem:
			m.tr.add(&entry{kind: kindSystem, text: clean(text)})
		}
	}
	p.flush()
	m.comp.reset()
	if !msg.conversation {
		m.notice(levelInfo, "resumed session: "+m.sessionID)
	}
}

// placer puts a turn's recorded calls on the transcript in the order of
// its tool messages: the calls of a turn started in order, and each tool
// message answers the next call of its tool.
type placer struct {
	m      *Model
	calls  map[string][]turn.ToolCallEvent
	turnID string
	used   map[int]bool // the indexes of the turn's calls placed
}

// card places the next unplaced call of the turn named name.
func (p *placer) card(name string) {
	for i, ev := range p.calls[p.turnID] {
		if !p.used[i] && ev.Name == name {
			p.place(i, ev)
			return
		}
	}
}

// flush places the turn's calls no tool message answered.
func (p *placer) flush() {
	for i, ev := range p.calls[p.turnID] {
		if !p.used[i] {
			p.place(i, ev)
		}
	}
	p.used = nil
}

func (p *placer) place(i int, ev turn.ToolCallEvent) {
	if p.used == nil {
		p.used = map[int]bool{}
	}
	p.used[i] = true
	p.m.tr.add(recordedCard(ev))
}

// recordedCard is the card of a call that ended before the UI saw it.
func recordedCard(ev turn.ToolCallEvent) *entry {
	end := ev.StartedAt.Add(ev.Duration)
	return &entry{kind: kindTool, tool: &toolCard{
		callID: ev.CallID, name: ev.Name, args: ev.Arguments,
		state: cardDone, status: ev.CardStatus(), isError: ev.IsError,
		started: ev.StartedAt, finished: end, dur: ev.Duration,
		output: ev.Output, summaryText: ev.Summary, display: ev.Display,
	}}
}
