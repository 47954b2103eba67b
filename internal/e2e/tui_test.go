//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/vtpty"
)

// The terminal UI's end-to-end scenarios: the built binary on a real
// pseudo-terminal, read through a VT emulator, with the fake provider
// answering from scripts.

// writeNoteScript asks to write notes.txt twice (two turns), each
// followed by a reply.
func writeNoteScript(t *testing.T) string {
	return demiurgetest.Script(t,
		demiurgetest.Call("write_file", map[string]any{"path": "notes.txt", "content": "hello pty\nsecond line\n"}),
		demiurgetest.Reply("wrote **notes.txt**"),
		demiurgetest.Call("write_file", map[string]any{"path": "notes.txt", "content": "again\n"}),
		demiurgetest.Reply("wrote it again"),
	)
}

// A request whose answer writes a file: the tool card appears waiting for
// approval with the approval panel below it; "a" allows it for the
// session, the card shows the coloured diff and success, the reply
// follows, and the file is written. A second write in the same session is
// not asked again. Ctrl-D on the idle, empty composer exits with 0.
func TestTUIWriteFileAllowedForSession(t *testing.T) {
	e := newEnv(t)
	v := startTUI(t, e, 100, 30, nil, "--fake-script", writeNoteScript(t))
	v.line("please write the note")
	s := v.waitText("Approval required")
	for _, want := range []string{"write_file", "notes.txt", "waiting for approval", "allow for session (a)", "fs.write"} {
		if !s.Contains(want) {
			t.Fatalf("the card and the question lack %q:\n%s", want, s)
		}
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("the file exists before the approval: %v", err)
	}
	v.typ("a")
	v.waitText("wrote notes.txt")
	s = v.waitFor("the card succeeded and the panel gone", func(s *vtpty.Screen) bool {
		return s.Contains("succeeded") && !s.Contains("Approval required")
	})
	for _, want := range []string{"hello pty", "second line"} {
		row := diffRow(s, want)
		if row < 0 {
			t.Fatalf("the diff lacks the added line %q:\n%s", want, s)
		}
		if s.RowColored[row] == 0 {
			t.Fatalf("the diff line %q is not coloured:\n%s", want, s)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); err != nil || string(b) != "hello pty\nsecond line\n" {
		t.Fatalf("the approved write: %q, %v", b, err)
	}
	v.waitStatus("idle")

	v.line("once more")
	s = v.waitText("wrote it again")
	if s.Contains("Approval required") {
		t.Fatalf("a write granted for the session was asked again:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); err != nil || string(b) != "again\n" {
		t.Fatalf("the second write: %q, %v", b, err)
	}
	v.waitStatus("idle")
	v.typ(vtpty.CtrlD)
	if code := v.exitCode(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// diffRow is the row showing text as an added line of a diff ("+" before
// it), or -1.
func diffRow(s *vtpty.Screen, text string) int {
	for i, l := range s.Lines {
		if j := strings.Index(l, text); j > 0 && strings.HasSuffix(strings.TrimRight(l[:j], " "), "+") {
			return i
		}
	}
	return -1
}

// slowScript runs `sleep <seconds>` through the terminal tool; the reply
// after it, "still here", is what the next provider call gets (the
// interrupted turn makes none).
func slowScript(t *testing.T, seconds string) string {
	return demiurgetest.Script(t,
		demiurgetest.Call("terminal", map[string]any{"command": "sleep " + seconds, "timeout_seconds": 120}),
		demiurgetest.Reply("still here"),
	)
}

// turnsOf is `demiurge sessions turns --json` of the home.
func turnsOf(e *env) []turnRow {
	e.t.Helper()
	r := e.run("", "sessions", "turns", "--json")
	if r.code != 0 {
		e.t.Fatalf("sessions turns: exit %d: %s", r.code, r.stderr)
	}
	var turns []turnRow
	if err := json.Unmarshal([]byte(r.stdout), &turns); err != nil {
		e.t.Fatalf("sessions turns --json: %v\n%s", err, r.stdout)
	}
	return turns
}

type turnRow struct {
	TurnID    string `json:"turn_id"`
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
}

// Ctrl-C during a slow turn (a `sleep` through the terminal tool) interrupts it: the card says cancelled, the sleep is gone, the
// turn is recorded as cancelled, and the session goes on with the next
// message.
func TestTUICtrlCCancelsASlowTurn(t *testing.T) {
	e := newEnv(t)
	v := startTUI(t, e, 100, 30, nil, "--approve", "all", "--fake-script", slowScript(t, "317"))
	v.line("run the slow command")
	waitProcess(t, "sleep 317")
	v.waitStatus("running")
	v.typ(vtpty.CtrlC)
	s := v.waitText("cancelled")
	if !s.Contains("terminal") {
		t.Fatalf("the cancelled card does not name the tool:\n%s", s)
	}
	v.waitStatus("idle")
	if left, gone := waitProcesses(func() []string { return processesWith("sleep 317") }); !gone {
		t.Fatalf("the interrupted command outlived its turn: %v", left)
	}
	turns := turnsOf(e)
	if len(turns) != 1 || turns[0].Status != "cancelled" {
		t.Fatalf("turns %+v, want one cancelled", turns)
	}

	v.line("are you there")
	v.waitText("still here")
	v.waitStatus("idle")
	turns = turnsOf(e)
	if len(turns) != 2 || turns[0].SessionID != turns[1].SessionID {
		t.Fatalf("turns %+v, want two in one session", turns)
	}
	statuses := map[string]bool{turns[0].Status: true, turns[1].Status: true}
	if !statuses["cancelled"] || !statuses["completed"] {
		t.Fatalf("turns %+v, want one cancelled and one completed", turns)
	}
}

// Losing the terminal during a slow turn cancels the turn and ends the
// UI: the process exits, the sleep is gone, the turn is cancelled.
func TestTUIHangupCancelsAndExits(t *testing.T) {
	e := newEnv(t)
	v := startTUI(t, e, 100, 30, nil, "--approve", "all", "--fake-script", slowScript(t, "319"))
	v.line("run the slow command")
	waitProcess(t, "sleep 319")
	if err := v.term.Hangup(); err != nil {
		t.Fatal(err)
	}
	if code := v.exitCode(); code != 0 {
		t.Fatalf("exit %d after the hangup, want 0", code)
	}
	if left, gone := waitProcesses(func() []string { return processesWith("sleep 319") }); !gone {
		t.Fatalf("the command outlived the hangup: %v", left)
	}
	if turns := turnsOf(e); len(turns) != 1 || turns[0].Status != "cancelled" {
		t.Fatalf("turns %+v, want one cancelled", turns)
	}
}

// Ctrl-D on the idle, empty composer exits with 0 and leaves nothing
// behind: not the UI, not a background command the session started, not
// any process of the UI's terminal session.
func TestTUICtrlDExitLeavesNoProcess(t *testing.T) {
	e := newEnv(t)
	script := demiurgetest.Script(t,
		demiurgetest.Call("terminal", map[string]any{"command": "sleep 318", "background": true}),
		demiurgetest.Reply("started it in the background"),
	)
	v := startTUI(t, e, 100, 30, nil, "--approve", "all", "--fake-script", script)
	pid := v.term.Pid()
	v.line("start the background command")
	v.waitText("started it in the background")
	waitProcess(t, "sleep 318")
	v.waitStatus("idle")
	v.typ(vtpty.CtrlD)
	if code := v.exitCode(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if left, gone := waitProcesses(func() []string { return processesWith("sleep 318") }); !gone {
		t.Fatalf("the background command outlived the UI: %v", left)
	}
	if left, gone := waitProcesses(func() []string { return sessionMembers(pid) }); !gone {
		t.Fatalf("processes of the UI's session outlived it: %v", left)
	}
	if left := processesWith(e.home); len(left) != 0 {
		t.Fatalf("processes of the home outlived the UI: %v", left)
	}
}

// NO_COLOR: the same screens as with colours (the card, its diff, the
// approval panel, the status line) are drawn without a single coloured
// cell.
func TestTUINoColor(t *testing.T) {
	e := newEnv(t)
	v := startTUI(t, e, 100, 30, []string{"NO_COLOR=1"}, "--fake-script", writeNoteScript(t))
	if s := v.term.Screen(); s.Colored != 0 {
		t.Fatalf("the first frame has %d coloured cells under NO_COLOR:\n%s", s.Colored, s)
	}
	v.line("please write the note")
	if s := v.waitText("Approval required"); s.Colored != 0 {
		t.Fatalf("the approval has %d coloured cells under NO_COLOR (per row %v):\n%s", s.Colored, s.RowColored, s)
	}
	v.typ("a")
	v.waitText("wrote notes.txt")
	s := v.waitStatus("idle")
	if diffRow(s, "hello pty") < 0 {
		t.Fatalf("no diff:\n%s", s)
	}
	if s.Colored != 0 {
		t.Fatalf("the diff has %d coloured cells under NO_COLOR (per row %v):\n%s", s.Colored, s.RowColored, s)
	}
}

// wordsReply is a reply of distinct words (no hyphens: a wrap may break
// a line after one) long enough to wrap at 60 columns several times.
var wordsReply = func() []string {
	var w []string
	for _, a := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"} {
		for _, n := range []string{"1", "2", "3"} {
			w = append(w, a+n)
		}
	}
	return w
}()

// wrappedWhole reports whether every word shows whole on exactly one row
// and the rows hold them in order: wrapped between words, not through
// them, and nothing drawn twice.
func wrappedWhole(s *vtpty.Screen, words []string) bool {
	row, col := 0, 0
	for _, w := range words {
		found := false
		for r := row; r < len(s.Lines) && !found; r++ {
			start := 0
			if r == row {
				start = col
			}
			if i := strings.Index(s.Lines[r][min(start, len(s.Lines[r])):], w); i >= 0 {
				row, col, found = r, start+i+len(w), true
			}
		}
		if !found || s.Count(w) != 1 {
			return false
		}
	}
	return true
}

// At 60 columns the layout holds: the reply wraps between words, the card
// and the status line keep to their rows. A resize to 100 columns and back
// redraws it whole, without leftovers of the other width, and a terminal
// too small for the layout gets a one-line notice until it grows again.
func TestTUINarrowTerminal(t *testing.T) {
	e := newEnv(t)
	script := demiurgetest.Script(t,
		demiurgetest.Call("write_file", map[string]any{"path": "narrow.txt", "content": "narrow\n"}),
		demiurgetest.Reply(strings.Join(wordsReply, " ")),
	)
	v := startTUI(t, e, 60, 24, nil, "--fake-script", script, "--approve", "all")
	v.line("write and tell")
	s := v.waitFor("the reply and the card", func(s *vtpty.Screen) bool {
		return s.Contains("lima3") && s.Contains("succeeded")
	})
	check := func(s *vtpty.Screen, when string) {
		t.Helper()
		if !wrappedWhole(s, wordsReply) {
			t.Fatalf("%s: the reply is not wrapped between words, or shows twice:\n%s", when, s)
		}
		if row := s.Row("write_file"); row < 0 || !strings.Contains(s.Lines[row], "narrow.txt") {
			t.Fatalf("%s: the card's header is not on one row:\n%s", when, s)
		}
		if !strings.Contains(status(s), "assistant") {
			t.Fatalf("%s: the status line is not the bottom row:\n%s", when, s)
		}
	}
	check(s, "60 columns")

	if err := v.term.Resize(100, 30); err != nil {
		t.Fatal(err)
	}
	v.waitFor("the layout at 100 columns", func(s *vtpty.Screen) bool {
		return s.Cols == 100 && wrappedWhole(s, wordsReply) && strings.Contains(status(s), "assistant")
	})
	if err := v.term.Resize(60, 24); err != nil {
		t.Fatal(err)
	}
	s = v.waitFor("the layout at 60 columns again", func(s *vtpty.Screen) bool {
		return s.Cols == 60 && wrappedWhole(s, wordsReply) && strings.Contains(status(s), "assistant")
	})
	check(s, "back at 60 columns")

	if err := v.term.Resize(30, 8); err != nil {
		t.Fatal(err)
	}
	v.waitFor("a one-line notice", func(s *vtpty.Screen) bool {
		n := 0
		for _, l := range s.Lines {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		return n == 1 && s.Contains("too small")
	})
	if err := v.term.Resize(60, 24); err != nil {
		t.Fatal(err)
	}
	v.waitFor("the layout after the notice", func(s *vtpty.Screen) bool {
		return wrappedWhole(s, wordsReply) && strings.Contains(status(s), "assistant")
	})
}

// sessionsOf is `demiurge sessions list --json` of the home, newest first.
func sessionsOf(e *env) []sessionRow {
	e.t.Helper()
	r := e.run("", "sessions", "list", "--json")
	if r.code != 0 {
		e.t.Fatalf("sessions list: exit %d: %s", r.code, r.stderr)
	}
	var list []sessionRow
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		e.t.Fatalf("sessions list --json: %v\n%s", err, r.stdout)
	}
	return list
}

type sessionRow struct {
	SessionID string `json:"session_id"`
}

// /resume opens a picker of the core's sessions, newest first; choosing
// the older one shows its transcript, and the next message continues it.
func TestTUIResumePicksAnOlderSession(t *testing.T) {
	e := newEnv(t)
	if r := e.run("first topic\n/new\nsecond topic\n", "chat"); r.code != 0 {
		t.Fatalf("seed two sessions: exit %d: %s", r.code, r.stderr)
	}
	list := sessionsOf(e)
	if len(list) != 2 {
		t.Fatalf("sessions %+v, want two", list)
	}
	older := list[1].SessionID

	v := startTUI(t, e, 100, 30, nil)
	v.line("/resume")
	s := v.waitFor("the picker with both sessions", func(s *vtpty.Screen) bool {
		return s.Contains("Resume session") && s.Contains("first topic") && s.Contains("second topic")
	})
	if s.Row("second topic") > s.Row("first topic") {
		t.Fatalf("the picker does not list the newest first:\n%s", s)
	}
	v.typ(vtpty.Down)
	v.typ(vtpty.Enter)
	s = v.waitText("resumed session: " + older)
	if !s.Contains("[fake] first topic") {
		t.Fatalf("the resumed session's transcript is not shown:\n%s", s)
	}
	v.line("back to the first")
	v.waitText("[fake] back to the first")
	v.waitStatus("idle")
	turns := turnsOf(e)
	if len(turns) == 0 {
		t.Fatal("no turns")
	}
	found := false
	for _, tr := range turns {
		if tr.SessionID == older && tr.Status == "completed" {
			found = true
		}
	}
	if !found {
		t.Fatalf("turns %+v: no completed turn of the resumed session %s", turns, older)
	}
}
