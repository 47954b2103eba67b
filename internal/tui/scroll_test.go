package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// PgUp and PgDn page through the transcript, the mouse wheel scrolls it,
// and output arriving while scrolled up does not move the window.
func TestScrollback(t *testing.T) {
	m, _ := newTestModel(t, 80, 20, Config{BusyMode: "queue"})
	for i := range 40 {
		m.notice(levelInfo, fmt.Sprintf("line %02d", i))
	}
	if !strings.Contains(screen(m), "line 39") {
		t.Fatal("the newest line is not on screen")
	}
	press(m, "pgup")
	s := screen(m)
	if strings.Contains(s, "line 39") || !strings.Contains(s, "scrolled") {
		t.Fatalf("PgUp did not scroll:\n%s", s)
	}
	m.notice(levelInfo, "line 40")
	if screen(m) != s {
		t.Fatal("new output moved the scrolled window")
	}
	for range 20 {
		press(m, "pgup")
	}
	if !strings.Contains(screen(m), "line 00") {
		t.Fatalf("PgUp does not reach the top:\n%s", screen(m))
	}
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if strings.Contains(screen(m), "line 00") {
		t.Fatal("the wheel does not scroll down")
	}
	for range 20 {
		press(m, "pgdown")
	}
	if !strings.Contains(screen(m), "line 40") || !m.tr.follow {
		t.Fatalf("PgDn does not come back to the newest line:\n%s", screen(m))
	}
}

// Ten thousand lines of transcript cost a keystroke's frame no more than
// the lines on screen: only the visible entries are rendered.
func TestLongTranscriptRendersOnlyTheWindow(t *testing.T) {
	m, _ := newTestModel(t, 100, 40, Config{})
	for i := range 5000 {
		m.tr.add(&entry{kind: kindUser, text: fmt.Sprintf("message %d", i)})
	}
	screen(m)
	rendered := 0
	for _, e := range m.tr.entries {
		if e.cached != nil {
			rendered++
		}
	}
	if rendered > 40 {
		t.Fatalf("%d entries rendered for a 40-row screen", rendered)
	}
}
