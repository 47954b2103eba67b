package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// reopen closes the UI and opens a fresh one over the same Host, as a new
// `demiurge` process would (with --session when sessionID is not ""), and
// runs its Init.
func (l *live) reopen(sessionID string) {
	l.t.Helper()
	l.b.close()
	for drained := false; !drained; {
		select {
		case <-l.msgs:
		default:
			drained = true
		}
	}
	o := Options{Host: l.h, CoreID: l.h.DefaultCore(), Workspace: l.ws, Approve: "all", SessionID: sessionID}
	l.b = newBridge(l.h, o, func(msg tea.Msg) {
		select {
		case l.msgs <- msg:
		case <-l.stop:
		}
	})
	cfg := startConfig(context.Background(), o)
	cfg.Now = time.Now
	l.m = newModel(l.b, cfg)
	l.m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	l.m.Init()
}

// runTurn sends text and waits for its turn to end.
func (l *live) runTurn(text string) {
	l.t.Helper()
	startTestTurn(l.m, text)
	l.until("the end of "+text, func() bool { return l.m.running == nil })
}

// A resumed session shows its earlier tool calls as cards where they
// happened, each as it ended: the write with its diff, the failed
// command with its exit code, the denied write as denied.
func TestLiveResumeShowsToolCards(t *testing.T) {
	l := newLive(t, "all",
		demiurgetest.Call("write_file", map[string]any{"path": "n.txt", "content": "resumed diff line\n"}),
		demiurgetest.Reply("wrote the note"),
		demiurgetest.Call("terminal", map[string]any{"command": "echo from before; exit 3"}),
		demiurgetest.Reply("ran the command"))
	l.runTurn("write the note")
	l.runTurn("run the command")
	sid := l.m.sessionID

	l.reopen(sid)
	l.until("the resumed session", l.shows("resumed session: "+sid))
	s := screen(l.m)
	order := []string{"write the note", "✓ write_file · n.txt · succeeded", "+resumed diff line", "wrote the note",
		"run the command", "$ echo from before; exit 3", "exit 3", "ran the command"}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		if i < 0 {
			t.Fatalf("%q is not on screen after the previous items:\n%s", want, s)
		}
		at += i + len(want)
	}
	if strings.Count(s, "✕ terminal") != 1 {
		t.Fatalf("the failed command's card is not marked failed:\n%s", s)
	}
}

// A denied call is resumed as denied: the card's status comes from the
// effect status of the call's end.
func TestLiveResumeShowsDenied(t *testing.T) {
	l := newLive(t, "deny",
		demiurgetest.Call("write_file", map[string]any{"path": "no.txt", "content": "x"}),
		demiurgetest.Reply("it was denied"))
	l.runTurn("try to write")
	sid := l.m.sessionID
	l.reopen(sid)
	l.until("the resumed session", l.shows("resumed session: "+sid))
	if s := screen(l.m); !strings.Contains(s, "write_file · no.txt · denied") {
		t.Fatalf("the denied call is not shown denied:\n%s", s)
	}
}

// Bare `demiurge` continues the CLI conversation: its history, tool cards
// included, is on screen from the start, and the next message goes to
// the same session.
func TestLiveConversationHistoryAtStart(t *testing.T) {
	l := newLive(t, "all",
		demiurgetest.Call("write_file", map[string]any{"path": "c.txt", "content": "conversation\n"}),
		demiurgetest.Reply("first answer"),
		demiurgetest.Reply("second answer"))
	l.runTurn("first question")
	sid := l.m.sessionID

	l.reopen("")
	l.until("the conversation's history", l.shows("first answer"))
	if l.m.sessionID != sid {
		t.Fatalf("the UI continues session %q, want the conversation's %q", l.m.sessionID, sid)
	}
	if s := screen(l.m); !strings.Contains(s, "✓ write_file · c.txt · succeeded") || !strings.Contains(s, "first question") {
		t.Fatalf("the conversation's card or question is missing:\n%s", s)
	}
	l.runTurn("second question")
	if l.m.sessionID != sid {
		t.Fatalf("the next turn ran in %q, want %q", l.m.sessionID, sid)
	}
	turns, err := l.h.ListTurns(context.Background(), "", sid, 10)
	if err != nil || len(turns) != 2 {
		t.Fatalf("the conversation has turns %+v, %v", turns, err)
	}
}

// A fresh home has no conversation: the UI starts empty and the first
// message makes the session.
func TestLiveNoConversationAtStart(t *testing.T) {
	l := newLive(t, "all", demiurgetest.Reply("hello there"))
	l.reopen("")
	l.runTurn("hi")
	if l.m.sessionID == "" || !strings.Contains(screen(l.m), "hello there") {
		t.Fatalf("session %q:\n%s", l.m.sessionID, screen(l.m))
	}
}
