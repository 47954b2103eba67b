//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// SIGHUP sent to the UI while a turn runs a command (its terminal still
// open, as when a terminal multiplexer or the shell passes the hangup on)
// cancels the turn and ends the UI cleanly: exit 0, the turn recorded as
// cancelled in `sessions turns`, the command gone, no process of the UI's
// terminal session or of its home left.
func TestTUISighupDuringTurn(t *testing.T) {
	e := newEnv(t)
	v := startTUI(t, e, 100, 30, nil, "--approve", "all", "--fake-script", slowScript(t, "323"))
	pid := v.term.Pid()
	v.line("run the slow command")
	waitProcess(t, "sleep 323")
	v.waitStatus("running")
	if err := v.term.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := v.exitCode(); code != 0 {
		t.Fatalf("exit %d after SIGHUP, want 0", code)
	}
	if left, gone := waitProcesses(func() []string { return processesWith("sleep 323") }); !gone {
		t.Fatalf("the command outlived the hangup: %v", left)
	}
	if left, gone := waitProcesses(func() []string { return sessionMembers(pid) }); !gone {
		t.Fatalf("processes of the UI's session outlived it: %v", left)
	}
	if left := processesWith(e.home); len(left) != 0 {
		t.Fatalf("processes of the home outlived the UI: %v", left)
	}
	if turns := turnsOf(e); len(turns) != 1 || turns[0].Status != "cancelled" {
		t.Fatalf("turns %+v, want one cancelled", turns)
	}
}

// Losing the terminal while an approval question is open denies it: the
// write never happens, the turn is recorded as cancelled, and the UI
// exits 0 with nothing left behind.
func TestTUIHangupWithOpenQuestion(t *testing.T) {
	e := newEnv(t)
	script := demiurgetest.Script(t,
		demiurgetest.Call("write_file", map[string]any{"path": "hungup.txt", "content": "never\n"}),
		demiurgetest.Reply("wrote it"),
	)
	v := startTUI(t, e, 100, 30, nil, "--fake-script", script)
	pid := v.term.Pid()
	v.line("write the file")
	v.waitText("Approval required")
	if err := v.term.Hangup(); err != nil {
		t.Fatal(err)
	}
	if code := v.exitCode(); code != 0 {
		t.Fatalf("exit %d after the hangup, want 0", code)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "hungup.txt")); !os.IsNotExist(err) {
		t.Fatalf("the unanswered write happened: %v", err)
	}
	if left, gone := waitProcesses(func() []string { return sessionMembers(pid) }); !gone {
		t.Fatalf("processes of the UI's session outlived it: %v", left)
	}
	if turns := turnsOf(e); len(turns) != 1 || turns[0].Status != "cancelled" {
		t.Fatalf("turns %+v, want one cancelled", turns)
	}
}
