package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// live is the model over the real bridge and a Host on a temporary home
// with the fake provider: the messages the bridge posts are pumped into
// the model as bubbletea would.
type live struct {
	t    *testing.T
	h    *host.Host
	b    *bridge
	m    *Model
	ws   string
	msgs chan tea.Msg
	stop chan struct{}
}

func newLive(t *testing.T, approve string, script ...demiurge.ModelResponse) *live {
	t.Helper()
	return newLiveHome(t, t.TempDir(), approve, script...)
}

// newLiveHome is newLive on a runtime home the test prepared.
func newLiveHome(t *testing.T, home, approve string, script ...demiurge.ModelResponse) *live {
	t.Helper()
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: home, FakeScript: demiurgetest.Script(t, script...)})
	if err != nil {
		t.Fatal(err)
	}
	l := &live{t: t, h: h, ws: t.TempDir(), msgs: make(chan tea.Msg, 64), stop: make(chan struct{})}
	post := func(msg tea.Msg) {
		select {
		case l.msgs <- msg:
		case <-l.stop:
		}
	}
	o := Options{Host: h, CoreID: h.DefaultCore(), Workspace: l.ws, Approve: approve}
	l.b = newBridge(h, o, post)
	cfg := startConfig(ctx, o)
	cfg.Now = time.Now
	l.m = newModel(l.b, cfg)
	l.m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	t.Cleanup(func() {
		close(l.stop)
		l.b.close()
		_ = h.Close(context.Background())
	})
	return l
}

// until feeds the model the bridge's messages until cond holds.
func (l *live) until(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.After(60 * time.Second)
	for !cond() {
		select {
		case msg := <-l.msgs:
			l.m.Update(msg)
		case <-deadline:
			l.t.Fatalf("timed out waiting for %s; screen:\n%s", what, screen(l.m))
		}
	}
}

func (l *live) shows(s string) func() bool {
	return func() bool { return strings.Contains(screen(l.m), s) }
}

// A write_file call shows its card and the question; "a" allows it for
// the session, the file is written, the card succeeds with its diff and
// the reply follows. The same write again is not asked.
func TestLiveApprovalAllowForSession(t *testing.T) {
	args := map[string]any{"path": "notes.txt", "content": "hello tui\n"}
	l := newLive(t, "ask",
		demiurgetest.Call("write_file", args), demiurgetest.Reply("wrote it"),
		demiurgetest.Call("write_file", args), demiurgetest.Reply("wrote it again"))
	startTestTurn(l.m, "write the note")
	l.until("the question", func() bool { return len(l.m.questions) > 0 })
	s := screen(l.m)
	for _, want := range []string{"Approval required", "waiting for approval", "+ hello tui", "notes.txt"} {
		if !strings.Contains(s, want) {
			t.Fatalf("%q not on screen:\n%s", want, s)
		}
	}
	press(l.m, "a")
	l.until("the reply", l.shows("wrote it"))
	l.until("the turn's end", func() bool { return l.m.running == nil })
	if b, err := os.ReadFile(filepath.Join(l.ws, "notes.txt")); err != nil || string(b) != "hello tui\n" {
		t.Fatalf("the approved write: %q, %v", b, err)
	}
	if !strings.Contains(screen(l.m), "✓ write_file · notes.txt · succeeded") {
		t.Fatalf("the card did not succeed:\n%s", screen(l.m))
	}
	startTestTurn(l.m, "again")
	l.until("the second reply", l.shows("wrote it again"))
	if len(l.m.questions) > 0 {
		t.Fatal("a session grant was asked again")
	}
}

// Esc denies: nothing is written, the card says denied, the turn goes on.
func TestLiveEscDenies(t *testing.T) {
	l := newLive(t, "ask",
		demiurgetest.Call("write_file", map[string]any{"path": "no.txt", "content": "x"}), demiurgetest.Reply("after the denial"))
	startTestTurn(l.m, "write")
	l.until("the question", func() bool { return len(l.m.questions) > 0 })
	press(l.m, "esc")
	l.until("the reply", l.shows("after the denial"))
	if !strings.Contains(screen(l.m), "denied") {
		t.Fatalf("the denial is not shown:\n%s", screen(l.m))
	}
	if _, err := os.Stat(filepath.Join(l.ws, "no.txt")); !os.IsNotExist(err) {
		t.Fatalf("a denied write happened: %v", err)
	}
}

// Ctrl-C cancels a slow turn: it is recorded as cancelled, the session
// goes on with the next message, and no process is left.
func TestLiveCtrlCCancelsTurn(t *testing.T) {
	l := newLive(t, "all",
		// The cancelled turn asks for no second response: the next turn
		// gets it.
		demiurgetest.Call("terminal", map[string]any{"command": "sleep 30"}), demiurgetest.Reply("still here"))
	startTestTurn(l.m, "slow")
	l.until("the running command", l.shows("$ sleep 30"))
	begun := time.Now()
	press(l.m, "ctrl+c")
	l.until("the interrupt", l.shows("turn interrupted"))
	if time.Since(begun) > 20*time.Second {
		t.Fatal("the cancel waited for the command")
	}
	turns, err := l.h.ListTurns(context.Background(), "", l.m.sessionID, 10)
	if err != nil || len(turns) != 1 || turns[0].Status != demiurge.TurnCancelled {
		t.Fatalf("turns %+v, %v", turns, err)
	}
	startTestTurn(l.m, "next")
	l.until("the next reply", l.shows("still here"))
}

// Closing the UI while a question is open denies it: the turn ends and
// nothing is written.
func TestLiveCloseDenies(t *testing.T) {
	l := newLive(t, "ask",
		demiurgetest.Call("write_file", map[string]any{"path": "late.txt", "content": "x"}), demiurgetest.Reply("done"))
	startTestTurn(l.m, "write")
	l.until("the question", func() bool { return len(l.m.questions) > 0 })
	if !isQuit(l.m.quit()) {
		t.Fatal("quit does not quit")
	}
	// What Run does after the program ends: cancel and wait.
	l.b.close()
	if _, err := os.Stat(filepath.Join(l.ws, "late.txt")); !os.IsNotExist(err) {
		t.Fatalf("the write happened after the UI closed: %v", err)
	}
	turns, err := l.h.ListTurns(context.Background(), "", l.m.sessionID, 10)
	if err != nil || len(turns) != 1 || turns[0].Status != demiurge.TurnCancelled {
		t.Fatalf("turns %+v, %v", turns, err)
	}
}

// A background task of the session that finishes shows as a notice in
// the transcript, through the session's live feed.
func TestLiveBackgroundTaskNotice(t *testing.T) {
	l := newLive(t, "all",
		demiurgetest.Call("terminal", map[string]any{"command": "echo from the background", "background": true}),
		demiurgetest.Reply("started it"),
		demiurgetest.Reply("noted"))
	startTestTurn(l.m, "run it in the background")
	l.until("the reply", l.shows("started it"))
	l.until("the completion notice", l.shows("background task "))
	if !strings.Contains(screen(l.m), "succeeded") {
		t.Fatalf("the notice does not say how the task ended:\n%s", screen(l.m))
	}
}
