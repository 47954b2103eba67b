package tui

import (
	"strings"
	"testing"
)

// selectedSuggestion is the panel row marked "›" on screen ("" none):
// the composer's own "› " row has no " · ".
func selectedSuggestion(m *Model) string {
	for _, l := range strings.Split(screen(m), "\n") {
		if r := strings.TrimSpace(l); strings.HasPrefix(r, "› /") && strings.Contains(r, " · ") {
			name, _, _ := strings.Cut(strings.TrimPrefix(r, "› "), " ")
			return name
		}
	}
	return ""
}

// Up and Down move the panel's selection, wrapping at both ends; Tab takes
// the selected command.
func TestSuggestionsSelectAndTab(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{})
	typeText(m, "/")
	if got := selectedSuggestion(m); got != "/help" {
		t.Fatalf("first selection %q:\n%s", got, screen(m))
	}
	press(m, "down")
	if got := selectedSuggestion(m); got != "/exit" {
		t.Fatalf("down: %q", got)
	}
	press(m, "up", "up")
	if got := selectedSuggestion(m); got != "/tool-display" {
		t.Fatalf("up wraps to the last: %q", got)
	}
	press(m, "down", "down")
	if m.comp.value() != "/" {
		t.Fatalf("moving the selection changed the draft: %q", m.comp.value())
	}
	press(m, "tab")
	if m.comp.value() != "/exit" {
		t.Fatalf("tab took %q, want the selected /exit", m.comp.value())
	}
	// A command with arguments comes with a space, and the panel closes.
	m.comp.reset()
	typeText(m, "/to")
	press(m, "tab")
	if m.comp.value() != "/tool-display " || selectedSuggestion(m) != "" {
		t.Fatalf("tab on a command with arguments: %q, panel at %q", m.comp.value(), selectedSuggestion(m))
	}
}

// Typing starts the selection from the top again.
func TestSuggestionsSelectionFollowsDraft(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{})
	typeText(m, "/")
	press(m, "down", "down")
	typeText(m, "q")
	if got := selectedSuggestion(m); got != "/quit" {
		t.Fatalf("after typing: %q\n%s", got, screen(m))
	}
}

// Enter takes the selected command; on a draft that already is the
// selected command it sends it.
func TestSuggestionsEnter(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{})
	typeText(m, "/he")
	press(m, "enter")
	if m.comp.value() != "/help" || len(eng.commands) != 0 {
		t.Fatalf("enter on a partial name: draft %q, commands %v", m.comp.value(), eng.commands)
	}
	press(m, "enter")
	if len(eng.commands) != 1 || eng.commands[0] != "/help" || !m.comp.empty() {
		t.Fatalf("enter on the whole name: draft %q, commands %v", m.comp.value(), eng.commands)
	}
}

// Esc hides the panel for this draft; Up and Down then walk the history,
// and typing brings the panel back.
func TestSuggestionsEscHides(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{BusyMode: "queue"})
	typeText(m, "earlier")
	press(m, "enter")
	typeText(m, "/")
	press(m, "esc")
	if got := selectedSuggestion(m); got != "" {
		t.Fatalf("esc left the panel open at %q:\n%s", got, screen(m))
	}
	press(m, "up")
	if m.comp.value() != "earlier" {
		t.Fatalf("up with the panel hidden: %q", m.comp.value())
	}
	press(m, "down")
	if m.comp.value() != "/" {
		t.Fatalf("down back to the draft: %q", m.comp.value())
	}
	typeText(m, "e")
	if got := selectedSuggestion(m); got != "/exit" {
		t.Fatalf("typing did not reopen the panel: %q\n%s", got, screen(m))
	}
}

// A command recalled from the history does not open the panel: Up and
// Down go on walking the history past it.
func TestSuggestionsHistoryWalksPastCommands(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{BusyMode: "queue"})
	for _, s := range []string{"first", "/help", "third"} {
		typeText(m, s)
		press(m, "enter")
	}
	press(m, "up", "up")
	if m.comp.value() != "/help" {
		t.Fatalf("up up: %q", m.comp.value())
	}
	if got := selectedSuggestion(m); got != "" {
		t.Fatalf("a recalled command opened the panel at %q", got)
	}
	press(m, "up")
	if m.comp.value() != "first" {
		t.Fatalf("up past a recalled command: %q", m.comp.value())
	}
	press(m, "down", "down")
	if m.comp.value() != "third" {
		t.Fatalf("down past a recalled command: %q", m.comp.value())
	}
}

// The panel drawn: every candidate, the selected one marked.
func TestSuggestionsGolden(t *testing.T) {
	m, _ := newTestModel(t, 80, 16, Config{})
	typeText(m, "/")
	press(m, "down")
	golden(t, "suggestions", screen(m))
}
