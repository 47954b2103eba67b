package tui

import (
	"strings"
)

// maxSuggestions is how many commands the suggestion panel lists at most
// (spec surfaces §2.8); a short screen lists fewer.
const maxSuggestions = 8

// maxCommandToken is longer than any command name: a longer draft is not
// one being typed.
const maxCommandToken = 64

// suggestPanel is the slash-command suggestion panel above the composer
// (spec surfaces §2.8). It is open while the draft is a command name being
// typed, unless Esc hid it for exactly this draft text; Up and Down move
// its selection, Tab and Enter take the selected command.
type suggestPanel struct {
	selected int
	// selFor is the draft the selection was made for: another draft starts
	// again from the top.
	selFor string
	// hiddenFor is the draft Esc (or a history recall) hid the panel for.
	hiddenFor string
	hidden    bool
}

// commandToken reports whether the draft is a command name being typed:
// "/" and then no space, newline or second slash.
func commandToken(s string) bool {
	return strings.HasPrefix(s, "/") && !strings.ContainsAny(s[1:], " \t\n/")
}

// suggestionsOpen lists what the panel shows now, with the selected row;
// nil when it is closed.
func (m *Model) suggestionsOpen() ([]suggestion, int) {
	// Cheap checks first: this runs for every frame, and the draft may be
	// a large paste.
	if m.panelOpen() || len(m.comp.buf) == 0 || m.comp.buf[0] != '/' || len(m.comp.buf) > maxCommandToken {
		return nil, 0
	}
	text := m.comp.value()
	if !commandToken(text) || (m.sugg.hidden && m.sugg.hiddenFor == text) {
		return nil, 0
	}
	cands := m.eng.suggest(text)
	if len(cands) > maxSuggestions {
		cands = cands[:maxSuggestions]
	}
	if len(cands) == 0 {
		return nil, 0
	}
	sel := 0
	if m.sugg.selFor == text {
		sel = min(m.sugg.selected, len(cands)-1)
	}
	return cands, sel
}

// hideSuggestions hides the panel until the draft changes.
func (m *Model) hideSuggestions() {
	m.sugg.hidden, m.sugg.hiddenFor = true, m.comp.value()
}

// suggestionKey handles a key while the panel is open: Up and Down move
// the selection (wrapping), Tab takes the selected command, Enter takes it
// unless the draft already is that command (then the draft is sent), Esc
// hides the panel. It reports whether it used the key.
func (m *Model) suggestionKey(ks string) (used, send bool) {
	cands, sel := m.suggestionsOpen()
	if cands == nil {
		return false, false
	}
	text := m.comp.value()
	switch ks {
	case "up":
		m.sugg.selected, m.sugg.selFor = (sel+len(cands)-1)%len(cands), text
	case "down":
		m.sugg.selected, m.sugg.selFor = (sel+1)%len(cands), text
	case "tab":
		m.takeSuggestion(cands[sel])
	case "enter":
		if strings.EqualFold(text, cands[sel].name) {
			return true, true
		}
		m.takeSuggestion(cands[sel])
	case "esc":
		m.hideSuggestions()
	default:
		return false, false
	}
	return true, false
}

// takeSuggestion puts the command in the draft, with a space after it when
// it takes arguments (the panel then closes: the name is complete).
func (m *Model) takeSuggestion(s suggestion) {
	line := s.name
	if strings.Contains(s.usage, " ") {
		line += " "
	}
	m.comp.set(line)
	m.comp.completions = nil
}

// suggestionRows draws the open panel in at most rows lines, keeping the
// selected row in sight: "› " marks it.
func (m *Model) suggestionRows(w, rows int) []string {
	cands, sel := m.suggestionsOpen()
	if cands == nil || rows <= 0 {
		return nil
	}
	first := 0
	if len(cands) > rows {
		first = min(max(0, sel-rows+1), len(cands)-rows)
	}
	last := min(len(cands), first+rows)
	out := make([]string, 0, last-first)
	for i := first; i < last; i++ {
		c := cands[i]
		row := orDefault(c.usage, c.name) + " · " + c.description
		if c.group != "" {
			row += " · " + c.group
		}
		if i == sel {
			out = append(out, m.th.selected.Render(shorten("› "+row, w)))
		} else {
			out = append(out, m.th.muted.Render(shorten("  "+row, w)))
		}
	}
	return out
}
