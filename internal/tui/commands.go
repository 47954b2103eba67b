package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// command runs a slash command line. /exit and /quit are the UI's own; the
// rest go to the engine, whose outcome comes back as an outcomeMsg.
func (m *Model) command(line string) tea.Cmd {
	name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch strings.ToLower(name) {
	case "/exit", "/quit":
		return m.quit()
	}
	m.eng.command(line)
	return nil
}

// applyOutcome shows a command's outcome: its action's session switch,
// its notice, then its picker or confirm.
func (m *Model) applyOutcome(out outcome, err error) tea.Cmd {
	if err != nil {
		m.notice(levelError, errorText(err))
		return nil
	}
	// A session switch clears the transcript first, so the notice that
	// says so stays; a resumed session's history says it itself.
	switch out.action {
	case actionExit:
		return m.quit()
	case actionNewSession:
		m.leaveSession()
		m.newSession, m.newSessionID = true, out.sessionID
		m.status = statusInfo{coreID: m.status.coreID, revision: m.status.revision, provider: m.status.provider,
			model: m.status.model, sessionID: out.sessionID}
		if out.sessionID != "" {
			m.eng.watch(out.sessionID)
		}
	case actionResume:
		m.leaveSession()
		m.sessionID = out.sessionID
		m.status = statusInfo{coreID: m.status.coreID, revision: m.status.revision, provider: m.status.provider,
			model: m.status.model, sessionID: out.sessionID}
		m.eng.loadHistory(out.sessionID)
		m.eng.refresh(out.sessionID)
		m.eng.watch(out.sessionID)
		out.notice = ""
	}
	if strings.TrimSpace(out.notice) != "" {
		if out.level == levelInfo {
			m.tr.add(&entry{kind: kindSystem, text: clean(out.notice)})
		} else {
			m.notice(out.level, out.notice)
		}
	}
	switch {
	case out.picker != nil:
		m.picker = &pickerState{spec: out.picker}
		m.confirm = nil
	case out.confirm != nil:
		m.confirm = &confirmState{spec: out.confirm}
		m.picker = nil
	}
	return nil
}

// leaveSession forgets the session the UI switches away from (its
// "allow for this session" answers end with it) and clears the screen.
func (m *Model) leaveSession() {
	if m.sessionID != "" {
		m.eng.forget(m.sessionID)
	}
	m.sessionID, m.newSession, m.newSessionID = "", false, ""
	m.tr.clear()
}

// pickerState is an open picker: Up/Down move, Enter or a number picks,
// Esc closes it without a choice.
type pickerState struct {
	spec     *pickerSpec
	selected int
}

func (p *pickerState) pick(m *Model, i int) {
	if i < 0 || i >= len(p.spec.items) {
		return
	}
	id, fn := p.spec.items[i].id, p.spec.onPick
	m.picker = nil
	if fn != nil {
		m.eng.callback(func(ctx context.Context) (outcome, error) { return fn(ctx, id) })
	}
}

// The picker's hint (spec surfaces §2.7, exact).
const pickerHint = "Enter selects · Up/Down moves · Esc cancels"

func (p *pickerState) view(th *theme, w, maxHeight int) []string {
	lines := []string{th.accentText.Render(strings.Repeat("─", w)), th.accentBold.Render(clean(p.spec.title))}
	room := max(maxHeight-3, 1)
	first := 0
	if p.selected >= room {
		first = p.selected - room + 1
	}
	for i := first; i < len(p.spec.items) && i < first+room; i++ {
		it := p.spec.items[i]
		row := fmt.Sprintf("%d. %s", i+1, clean(it.title))
		if it.preview != "" {
			row += " · " + oneLine(clean(it.preview))
		}
		if !it.at.IsZero() {
			row += " · " + it.at.Local().Format("2006-01-02 15:04")
		}
		if i == p.selected {
			lines = append(lines, th.selected.Render(shorten("› "+row, w)))
		} else {
			lines = append(lines, th.muted.Render(shorten("  "+row, w)))
		}
	}
	if len(p.spec.items) == 0 {
		lines = append(lines, th.muted.Render("  (nothing to choose)"))
	}
	return append(lines, th.faint.Render(shorten(pickerHint, w)))
}

// confirmState is an open yes/no question; anything but yes is no.
type confirmState struct{ spec *confirmSpec }

func (c *confirmState) decide(m *Model, yes bool) {
	m.confirm = nil
	fn := c.spec.onNo
	if yes {
		fn = c.spec.onYes
	}
	if fn != nil {
		m.eng.callback(fn)
	}
}

func (c *confirmState) view(th *theme, w int) []string {
	lines := []string{th.accentText.Render(strings.Repeat("─", w))}
	lines = append(lines, styleAll(th.bold, wrapPlain(clean(c.spec.question), w))...)
	return append(lines, th.faint.Render(shorten("y yes · n no · Esc no", w)))
}
