package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The smallest screen the layout is drawn on; below it one line says so.
const (
	minWidth  = 40
	minHeight = 10
)

// The composer's fixed strings (spec surfaces §2.3, §2.8, exact).
const (
	placeholder      = "Message demiurge, or type /help"
	replyPlaceholder = "Respond to the prompt above"
	composerHint     = "Enter submit · Ctrl-C interrupt"
)

// View draws the screen, top to bottom: transcript, the open question,
// command suggestions, a rule, the composer, the hint row and the status
// line. Every line is padded one column at both sides and cut to the width.
func (m *Model) View() tea.View {
	v := tea.View{AltScreen: true, MouseMode: tea.MouseModeCellMotion, WindowTitle: "demiurge"}
	if m.quitting {
		return v
	}
	if m.width < minWidth || m.height < minHeight {
		v.SetContent(shorten(fmt.Sprintf("terminal too small (%d×%d): needs %d×%d", m.width, m.height, minWidth, minHeight), m.width))
		return v
	}
	iw := m.innerWidth()
	bottom := m.bottom(iw)
	panel := m.panel(iw, m.height-len(bottom.lines)-1)
	th := m.height - len(bottom.lines) - len(panel)
	lines := m.tr.window(th, m.renderCtx())
	out := make([]string, 0, m.height)
	for _, l := range lines {
		out = append(out, " "+fit(l, iw))
	}
	for len(out) < th {
		out = append(out, "")
	}
	for _, l := range panel {
		out = append(out, " "+fit(l, iw))
	}
	top := len(out)
	for _, l := range bottom.lines {
		out = append(out, " "+fit(l, iw))
	}
	v.SetContent(strings.Join(out, "\n"))
	if bottom.cursorRow >= 0 && !m.panelOpen() {
		v.Cursor = tea.NewCursor(1+bottom.cursorCol, top+bottom.cursorRow)
	}
	return v
}

// transcriptHeight is the rows the transcript gets with the current
// panels and draft.
func (m *Model) transcriptHeight() int {
	iw := m.innerWidth()
	b := m.bottom(iw)
	return max(m.height-len(b.lines)-len(m.panel(iw, m.height-len(b.lines)-1)), 1)
}

type bottomView struct {
	lines                []string
	cursorRow, cursorCol int // in lines; row -1: no cursor
}

// bottom is the suggestions, rule, composer, hint and status rows.
func (m *Model) bottom(w int) bottomView {
	th := &m.th
	var b bottomView
	// The suggestions take at most a third of the screen.
	b.lines = append(b.lines, m.suggestionRows(w, min(maxSuggestions, max(1, m.height/3)))...)
	b.lines = append(b.lines, th.border.Render(strings.Repeat("─", w)))
	rows := min(maxComposerRows, max(1, m.height/4))
	if m.panelOpen() {
		b.lines = append(b.lines, th.faint.Render("  "+replyPlaceholder))
		b.cursorRow = -1
	} else {
		cl, cr, cc := m.comp.view(th, w, placeholder, rows)
		b.cursorRow, b.cursorCol = len(b.lines)+cr, cc
		b.lines = append(b.lines, cl...)
	}
	b.lines = append(b.lines, m.hintRow(w), m.statusRow(w))
	return b
}

// panel is the open question, picker or confirm, in at most maxHeight rows.
func (m *Model) panel(w, maxHeight int) []string {
	switch {
	case len(m.questions) > 0:
		return m.approval.view(&m.th, m.questions[0], len(m.questions)-1, w, maxHeight)
	case m.confirm != nil:
		return m.confirm.view(&m.th, w)
	case m.picker != nil:
		return m.picker.view(&m.th, w, maxHeight)
	}
	return nil
}

func (m *Model) hintRow(w int) string {
	th := &m.th
	left := th.faint.Render(composerHint)
	switch {
	case m.exitArmed:
		left = th.accentText.Render("Press Ctrl-C again to exit")
	case m.panelOpen():
		left = th.faint.Render("Esc denies or closes")
	}
	var right []string
	if !m.tr.follow {
		right = append(right, "scrolled · PgDn for newer")
	}
	if n := len(m.comp.buf); n > 0 {
		right = append(right, fmt.Sprintf("%d chars", n))
	}
	return spread(left, th.faint.Render(strings.Join(right, " · ")), w)
}

// statusRow is the status line: core and revision, provider and model,
// session, tokens of the last step and the session, running tasks, and
// whether a turn runs or messages wait.
func (m *Model) statusRow(w int) string {
	th := &m.th
	s := m.status
	var left []string
	core := s.coreID
	if s.revision != "" {
		core += "@" + shortRev(s.revision)
	}
	left = append(left, core)
	if s.provider != "" || s.model != "" {
		left = append(left, orDefault(s.provider, "?")+":"+orDefault(s.model, "?"))
	}
	if s.sessionID != "" {
		left = append(left, shortID(s.sessionID))
	} else {
		left = append(left, "new session")
	}
	state := "idle"
	st := th.muted
	if m.running != nil {
		state, st = "running", th.accentText
	}
	if len(m.queue) > 0 {
		state += fmt.Sprintf(" · queued %d", len(m.queue))
	}
	// The right side in order of importance: what does not fit is left out.
	parts := []string{state}
	if s.tasks > 0 {
		parts = append(parts, fmt.Sprintf("tasks %d", s.tasks))
	}
	if s.tokensKnown {
		// in/out tokens of the last step, then of the session (Σ).
		parts = append(parts, fmt.Sprintf("tok %s/%s Σ %s/%s",
			count(s.lastIn), count(s.lastOut), count(s.sessionIn), count(s.sessionOut)))
	}
	parts = append(parts, "busy "+m.busyMode, "tools "+string(m.display))
	l := th.muted.Render(strings.Join(left, " · "))
	right := parts[0]
	for _, p := range parts[1:] {
		if width(l)+2+width(right)+3+width(p) > w {
			break
		}
		right += " · " + p
	}
	return spread(l, st.Render(right), w)
}

func shortRev(r string) string {
	if len(r) > 7 {
		return r[:7]
	}
	return r
}

// count shows a token count compactly: 950, 12.3k, 1.2M.
func count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// spread puts left at the left edge and right at the right edge of w
// columns; when both do not fit, right is cut first, then left.
func spread(left, right string, w int) string {
	lw, rw := width(left), width(right)
	if rw == 0 {
		return fit(left, w)
	}
	if lw+1+rw > w {
		room := w - lw - 1
		if room < 12 {
			return fit(left, w)
		}
		right = truncate(right, room)
		rw = width(right)
	}
	return left + strings.Repeat(" ", max(1, w-lw-rw)) + right
}
