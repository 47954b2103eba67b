//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/internal/vtpty"
)

// The harness against the line-mode chat on a terminal (--line): what the chat
// prints is on the emulated screen row by row, an approval answered with
// "y" lets the write through, and Ctrl-D on the empty prompt ends the
// chat with 0.
func TestVTLineChatApprovesAndExits(t *testing.T) {
	e := newEnv(t)
	script := writeScript(e, "vt.txt", "through the emulator", "wrote vt.txt")
	v := startTerm(t, e, 120, 40, nil, "chat", "--line", "--fake-script", script)
	v.waitText("demiurge chat · core")
	v.waitFor("the prompt", func(s *vtpty.Screen) bool { return s.Lines[s.CursorY] == ">" || s.Lines[s.CursorY] == "> " })
	v.line("please write it")
	s := v.waitText("[y] allow once  [a] allow for this session  [n] deny")
	if !s.Contains("Approval needed") || !s.Contains("vt.txt") {
		t.Fatalf("the question does not say what is asked:\n%s", s)
	}
	v.line("y")
	v.waitText(`· write_file {content: "through the emulator", path: "vt.txt"} … ok`)
	s = v.waitText("wrote vt.txt")
	if b, err := os.ReadFile(filepath.Join(e.workspace, "vt.txt")); err != nil || string(b) != "through the emulator" {
		t.Fatalf("the approved write: %q, %v\n%s", b, err, s)
	}
	v.waitFor("the next prompt", func(s *vtpty.Screen) bool { return s.Row("wrote vt.txt") < s.CursorY && s.Lines[s.CursorY] == ">" })
	v.typ(vtpty.CtrlD)
	if code := v.exitCode(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
