package tui

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

// In queue mode a message sent during a turn waits and runs when the turn
// ends; nothing is cancelled.
func TestBusyQueue(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{BusyMode: "queue"})
	seq := startTestTurn(m, "first")
	typeText(m, "second")
	press(m, "enter")
	if len(eng.cancelled) != 0 || len(eng.started) != 1 {
		t.Fatalf("queue mode cancelled %v, started %d", eng.cancelled, len(eng.started))
	}
	if !strings.Contains(screen(m), "queued input: second") || !strings.Contains(screen(m), "queued 1") {
		t.Fatalf("the queued message is not shown:\n%s", screen(m))
	}
	send(m, done(seq, demiurge.TurnCompleted))
	if len(eng.started) != 2 || eng.started[1].text != "second" {
		t.Fatalf("the queued message did not run next: %+v", eng.started)
	}
	if eng.started[1].sessionID != "session_0123456789abcdefgh" {
		t.Fatalf("the next turn is not in the session of the first: %q", eng.started[1].sessionID)
	}
}

// In interrupt mode a message sent during a turn cancels it and runs once
// the cancelled turn has ended.
func TestBusyInterrupt(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{BusyMode: "interrupt"})
	seq := startTestTurn(m, "first")
	typeText(m, "instead")
	press(m, "enter")
	if len(eng.cancelled) != 1 || eng.cancelled[0] != seq {
		t.Fatalf("interrupt mode did not cancel: %v", eng.cancelled)
	}
	if len(eng.started) != 1 {
		t.Fatal("the new message started before the old turn ended")
	}
	if !strings.Contains(screen(m), "interrupting current turn: new input") {
		t.Fatalf("no interrupt notice:\n%s", screen(m))
	}
	send(m, done(seq, demiurge.TurnCancelled))
	if len(eng.started) != 2 || eng.started[1].text != "instead" {
		t.Fatalf("the message did not run after the interrupt: %+v", eng.started)
	}
	if !strings.Contains(screen(m), "turn interrupted") {
		t.Fatalf("no interrupted notice:\n%s", screen(m))
	}
}

// A failed turn and an error are said in the transcript; the next message
// still runs.
func TestErrorsKeepTheSessionUsable(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{})
	seq := startTestTurn(m, "hello")
	res := done(seq, demiurge.TurnFailed)
	res.res.Error = &demiurge.Error{Code: demiurge.EUNAVAILABLE, Message: "provider error: 503 service unavailable"}
	send(m, res)
	if !strings.Contains(screen(m), "turn failed: provider error: 503 service unavailable") {
		t.Fatalf("the failure is not shown:\n%s", screen(m))
	}
	seq = startTestTurn(m, "again")
	send(m, turnDoneMsg{seq: seq, err: demiurge.Errorf(demiurge.ECONFIG, "core assistant: agent.yaml:3: bad key")})
	if !strings.Contains(screen(m), "core assistant: agent.yaml:3: bad key") {
		t.Fatalf("the load error is not shown:\n%s", screen(m))
	}
	startTestTurn(m, "third")
	if len(eng.started) != 3 {
		t.Fatal("the session did not stay usable")
	}
}

// Streamed text and tool cards keep their order; a delivery equal to the
// streamed reply is not shown twice.
func TestStreamAndCardsInOrder(t *testing.T) {
	m, _ := newTestModel(t, 80, 30, Config{})
	seq := startTestTurn(m, "go")
	send(m, streamMsg{seq: seq, delta: "Let me "}, streamMsg{seq: seq, delta: "look."})
	send(m, toolStart(seq, "c1", "read_file", map[string]any{"path": "a.txt"}))
	send(m, streamMsg{seq: seq, delta: "Done reading."})
	send(m, deliveryMsg{seq: seq, out: demiurge.Outbound{Visible: true, Kind: "message", Text: "Let me look.Done reading."}})
	send(m, done(seq, demiurge.TurnCompleted))
	s := screen(m)
	a, b, c := strings.Index(s, "Let me look."), strings.Index(s, "read_file"), strings.Index(s, "Done reading.")
	if a < 0 || b < a || c < b {
		t.Fatalf("out of order:\n%s", s)
	}
	if strings.Count(s, "Done reading.") != 1 {
		t.Fatalf("the delivery repeated the streamed reply:\n%s", s)
	}
}

// Escape sequences from the model never reach the terminal.
func TestControlCharactersAreEscaped(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{})
	seq := startTestTurn(m, "x")
	send(m, streamMsg{seq: seq, delta: "evil \x1b]52;c;Zm9v\x07 text"})
	send(m, toolStart(seq, "c1", "terminal", map[string]any{"command": "echo \x1b[2J"}))
	v := m.View().Content
	if strings.Contains(v, "\x1b]52") || strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\x07") {
		t.Fatalf("a control sequence from the model reached the screen: %q", v)
	}
	if !strings.Contains(screen(m), `\u001b`) {
		t.Fatalf("the escape is not shown escaped:\n%s", screen(m))
	}
}
