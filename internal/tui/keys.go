package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge/effect"
)

// key handles one key press. Ctrl-C and the scroll keys work everywhere;
// an open question takes every other key; the composer gets the rest.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.Keystroke()
	if ks == "ctrl+c" {
		return m.ctrlC()
	}
	m.exitArmed = false
	switch ks {
	case "pgup":
		m.scrollUp(max(m.transcriptHeight()-1, 1))
		return nil
	case "pgdown":
		m.scrollDown(max(m.transcriptHeight()-1, 1))
		return nil
	case "ctrl+o":
		if e := m.tr.lastTool(); e != nil {
			e.tool.expanded = !e.tool.expanded
			e.changed()
		}
		return nil
	}
	switch {
	case len(m.questions) > 0:
		m.approvalKey(ks)
		return nil
	case m.confirm != nil:
		m.confirmKey(ks)
		return nil
	case m.picker != nil:
		m.pickerKey(ks)
		return nil
	}
	return m.composerKey(k, ks)
}

// ctrlC interrupts the running turn; with none, it clears the draft, closes
// a picker, or, on an empty composer, exits when pressed twice.
func (m *Model) ctrlC() tea.Cmd {
	switch {
	case m.running != nil:
		m.exitArmed = false
		m.interrupt("Ctrl-C")
		return nil
	case len(m.questions) > 0:
		// A background task's question with no turn of ours running.
		m.exitArmed = false
		m.answer(denyDecision)
		return nil
	case m.picker != nil || m.confirm != nil:
		m.exitArmed = false
		m.closePanels()
		return nil
	case !m.comp.empty():
		m.exitArmed = false
		m.comp.reset()
		return nil
	case m.exitArmed:
		return m.quit()
	}
	m.exitArmed = true
	return nil
}

func (m *Model) closePanels() {
	if m.confirm != nil {
		m.confirm.decide(m, false)
	}
	m.picker = nil
}

// approvalKey answers the shown question: y/1 allow once, a/2 allow for
// this session, n/3 or Esc deny, Enter the selected choice, f the full
// arguments.
func (m *Model) approvalKey(ks string) {
	switch strings.ToLower(ks) {
	case "y", "1":
		m.answer(effect.DecisionAllowOnce)
	case "a", "2":
		m.answer(effect.DecisionAllowSession)
	case "n", "3", "esc":
		m.answer(denyDecision)
	case "enter":
		m.answer(approvalChoices[m.approval.selected].decision)
	case "up", "k":
		m.approval.selected = (m.approval.selected + len(approvalChoices) - 1) % len(approvalChoices)
	case "down", "j", "tab":
		m.approval.selected = (m.approval.selected + 1) % len(approvalChoices)
	case "f":
		m.approval.full = !m.approval.full
	}
}

func (m *Model) confirmKey(ks string) {
	switch strings.ToLower(ks) {
	case "y", "enter":
		m.confirm.decide(m, true)
	case "n", "esc":
		m.confirm.decide(m, false)
	}
}

func (m *Model) pickerKey(ks string) {
	p := m.picker
	n := len(p.spec.items)
	switch ks {
	case "esc":
		m.picker = nil
	case "up":
		if n > 0 {
			p.selected = (p.selected + n - 1) % n
		}
	case "down", "tab":
		if n > 0 {
			p.selected = (p.selected + 1) % n
		}
	case "enter":
		p.pick(m, p.selected)
	default:
		if len(ks) == 1 && ks[0] >= '1' && ks[0] <= '9' {
			p.pick(m, int(ks[0]-'1'))
		}
	}
}

// composerKey edits the draft. Enter sends; Shift+Enter, Alt+Enter and
// Ctrl-J insert a newline.
func (m *Model) composerKey(k tea.KeyPressMsg, ks string) tea.Cmd {
	c := &m.comp
	w := m.innerWidth() - 2
	if ks != "tab" {
		c.completions = nil
	}
	used, send := m.suggestionKey(ks)
	if used && !send {
		return nil
	}
	switch ks {
	case "enter":
		text := strings.TrimSpace(c.value())
		if text == "" {
			return nil
		}
		return m.submit(text)
	case "shift+enter", "alt+enter", "ctrl+j", "ctrl+enter":
		c.insert("\n")
	case "ctrl+d":
		if c.empty() && m.running == nil {
			return m.quit()
		}
		c.deleteForward()
	case "backspace", "ctrl+h":
		c.backspace()
	case "delete":
		c.deleteForward()
	case "left", "ctrl+b":
		c.left()
	case "right", "ctrl+f":
		c.right()
	case "home", "ctrl+a":
		c.home()
	case "end", "ctrl+e":
		c.end()
	case "alt+left", "ctrl+left", "alt+b":
		c.cur = c.wordLeft()
	case "alt+right", "ctrl+right", "alt+f":
		c.cur = c.wordRight()
	case "ctrl+u":
		c.killToStart()
	case "ctrl+k":
		c.killToEnd()
	case "ctrl+w", "alt+backspace":
		c.deleteWordBack()
	case "up":
		if !c.vertical(-1, w) && c.historyPrev() {
			m.hideSuggestions() // Up and Down go on walking the history
		}
	case "down":
		if !c.vertical(1, w) && c.historyNext() {
			m.hideSuggestions()
		}
	case "tab":
		if strings.HasPrefix(c.value(), "/") {
			c.complete(func(s string) []string { return m.eng.complete(m, s) })
		}
	case "esc":
		c.completions = nil
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			c.insert(k.Text)
		}
	}
	return nil
}
