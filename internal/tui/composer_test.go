package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Enter sends the trimmed draft; Shift+Enter, Alt+Enter and Ctrl-J insert
// newlines; a blank draft is not sent.
func TestComposerEnterAndNewlines(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{})
	press(m, "enter")
	typeText(m, "   ")
	press(m, "enter")
	if len(eng.started) != 0 {
		t.Fatal("a blank draft was sent")
	}
	press(m, "ctrl+u")
	typeText(m, "one")
	press(m, "shift+enter")
	typeText(m, "two")
	press(m, "alt+enter")
	typeText(m, "three")
	press(m, "ctrl+j")
	typeText(m, "four")
	press(m, "enter")
	if len(eng.started) != 1 || eng.started[0].text != "one\ntwo\nthree\nfour" {
		t.Fatalf("sent %+v", eng.started)
	}
	if !m.comp.empty() {
		t.Fatal("the composer was not cleared")
	}
}

// Up and Down walk the sent messages and bring the unsent draft back.
func TestComposerHistory(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{BusyMode: "queue"})
	for _, s := range []string{"first", "second"} {
		typeText(m, s)
		press(m, "enter")
	}
	typeText(m, "draft")
	press(m, "up")
	if m.comp.value() != "second" {
		t.Fatalf("up: %q", m.comp.value())
	}
	press(m, "up")
	if m.comp.value() != "first" {
		t.Fatalf("up up: %q", m.comp.value())
	}
	press(m, "up")
	if m.comp.value() != "first" {
		t.Fatalf("past the oldest: %q", m.comp.value())
	}
	press(m, "down", "down")
	if m.comp.value() != "draft" {
		t.Fatalf("back to the draft: %q", m.comp.value())
	}
}

// In a multiline draft Up and Down move between its rows first.
func TestComposerMultilineMoves(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{})
	typeText(m, "sent")
	press(m, "enter")
	typeText(m, "abc")
	press(m, "shift+enter")
	typeText(m, "de")
	press(m, "up")
	if m.comp.value() != "abc\nde" || m.comp.cur != 2 {
		t.Fatalf("up inside the draft: %q at %d", m.comp.value(), m.comp.cur)
	}
	typeText(m, "X")
	if m.comp.value() != "abXc\nde" {
		t.Fatalf("typed on the first row: %q", m.comp.value())
	}
}

// A large paste is kept whole and sent whole; the screen shows only the
// rows around the cursor.
func TestComposerLargePaste(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{})
	var b strings.Builder
	for i := range 5000 {
		b.WriteString("pasted line ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\r\n")
	}
	paste := b.String()
	send(m, tea.PasteMsg{Content: paste})
	if h := strings.Count(screen(m), "\n") + 1; h != 24 {
		t.Fatalf("the frame is %d lines high", h)
	}
	press(m, "enter")
	want := strings.TrimSpace(strings.ReplaceAll(paste, "\r\n", "\n"))
	if len(eng.started) != 1 || eng.started[0].text != want {
		t.Fatalf("the paste was not sent whole: %d of %d bytes", len(eng.started[0].text), len(want))
	}
}

// Tab completes a command's argument and cycles through the candidates
// once the name is complete (the suggestion panel has closed).
func TestComposerTabCompletion(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{})
	typeText(m, "/qu")
	press(m, "tab")
	if m.comp.value() != "/quit" {
		t.Fatalf("tab: %q", m.comp.value())
	}
	m.comp.reset()
	typeText(m, "/tool-display ")
	press(m, "tab")
	if m.comp.value() != "/tool-display summary" {
		t.Fatalf("tab on an argument: %q", m.comp.value())
	}
}
