//go:build unix

package vtpty_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	xterm "golang.org/x/term"

	"github.com/demiurge/demiurge/internal/vtpty"
)

// deadline is generous: the machine may be shared by several test runs.
const deadline = 60 * time.Second

func start(t *testing.T, cols, rows int, name string, args ...string) *vtpty.Term {
	t.Helper()
	term, err := vtpty.Start(exec.Command(name, args...), cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return term
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// The program's output lands on the emulated screen where a terminal
// draws it: cursor movement and erasing are applied, not recorded.
func TestScreenShowsWhatTheProgramDraws(t *testing.T) {
	term := start(t, 40, 6, "sh", "-c", `printf 'first line\r\nsecond\r\n\033[2;1Hcovered\033[K\r\n\033[31mred\033[0m\r\n'; exec sleep 60`)
	ctx := waitCtx(t)
	s, err := term.WaitText(ctx, "red")
	if err != nil {
		t.Fatal(err)
	}
	if s.Lines[0] != "first line" || s.Lines[1] != "covered" || s.Lines[2] != "red" {
		t.Fatalf("rows %q, want the second row overwritten:\n%s", s.Lines[:3], s)
	}
	if s.Colored != 3 || s.RowColored[2] != 3 {
		t.Fatalf("%d coloured cells (per row %v), want the 3 of \"red\" on row 2:\n%s", s.Colored, s.RowColored, s)
	}
	if len(s.Lines) != 6 || s.Cols != 40 {
		t.Fatalf("screen %d×%d rows %d, want 40×6", s.Cols, s.Rows, len(s.Lines))
	}
}

// Typed text reaches the program through the terminal's line discipline:
// cat echoes it, Ctrl-D at the start of a line ends its input, and Wait
// reports the exit status.
func TestTypeReachesTheProgramAndWaitReportsTheExit(t *testing.T) {
	term := start(t, 60, 10, "sh", "-c", `cat; echo "cat done"; exit 3`)
	ctx := waitCtx(t)
	if err := term.Type("hello terminal" + vtpty.Enter); err != nil {
		t.Fatal(err)
	}
	s, err := term.WaitFor(ctx, "the echoed and the copied line", func(s *vtpty.Screen) bool { return s.Count("hello terminal") == 2 })
	if err != nil {
		t.Fatal(err)
	}
	if s.Row("hello terminal") != 0 {
		t.Fatalf("the echo is not on the first row:\n%s", s)
	}
	if err := term.Type(vtpty.CtrlD); err != nil {
		t.Fatal(err)
	}
	if _, err := term.WaitText(ctx, "cat done"); err != nil {
		t.Fatal(err)
	}
	st, err := term.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3", st)
	}
}

// Ctrl-C is the terminal's interrupt: the line discipline turns it into
// SIGINT for the foreground process group.
func TestCtrlCInterruptsTheForegroundProgram(t *testing.T) {
	term := start(t, 60, 10, "sh", "-c", `echo ready; exec sleep 60`)
	ctx := waitCtx(t)
	if _, err := term.WaitText(ctx, "ready"); err != nil {
		t.Fatal(err)
	}
	if err := term.Type(vtpty.CtrlC); err != nil {
		t.Fatal(err)
	}
	st, err := term.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("sleep ended with %v, want SIGINT", st)
	}
}

// A resize reaches the program as its terminal's new size, and the
// emulator draws at that size.
func TestResizeChangesTheProgramsTerminal(t *testing.T) {
	term := start(t, 80, 24, "sh", "-c", `stty size; trap 'stty size' WINCH; echo armed; while :; do sleep 0.05; done`)
	ctx := waitCtx(t)
	if _, err := term.WaitText(ctx, "armed"); err != nil {
		t.Fatal(err)
	}
	if !term.Screen().Contains("24 80") {
		t.Fatalf("initial size not 24 80:\n%s", term.Screen())
	}
	if err := term.Resize(60, 20); err != nil {
		t.Fatal(err)
	}
	s, err := term.WaitText(ctx, "20 60")
	if err != nil {
		t.Fatal(err)
	}
	if s.Cols != 60 || s.Rows != 20 || len(s.Lines) != 20 {
		t.Fatalf("emulator %d×%d with %d rows, want 60×20", s.Cols, s.Rows, len(s.Lines))
	}
}

// Hangup closes the terminal: the session's leader gets SIGHUP.
func TestHangupSendsSIGHUP(t *testing.T) {
	term := start(t, 60, 10, "sh", "-c", `echo ready; exec sleep 60`)
	ctx := waitCtx(t)
	if _, err := term.WaitText(ctx, "ready"); err != nil {
		t.Fatal(err)
	}
	if err := term.Hangup(); err != nil {
		t.Fatal(err)
	}
	st, err := term.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGHUP {
		t.Fatalf("sleep ended with %v, want SIGHUP", st)
	}
}

// Close kills a program still running, with its process group, and reaps
// it; a second Close is harmless.
func TestCloseKillsAndReaps(t *testing.T) {
	term, err := vtpty.Start(exec.Command("sh", "-c", `sleep 60 & echo "child $!"; wait`), 60, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	ctx := waitCtx(t)
	s, err := term.WaitText(ctx, "child ")
	if err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Sscanf(s.Lines[s.Row("child ")], "child %d", &child); err != nil {
		t.Fatalf("no child pid: %v\n%s", err, s)
	}
	if err := term.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-term.Exited():
	default:
		t.Fatal("Close returned before the program was reaped")
	}
	if err := term.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The background sleep was in the program's process group: it is
	// killed too (it may linger as a zombie of init for a moment).
	for end := time.Now().Add(deadline); ; {
		if err := syscall.Kill(child, 0); err == syscall.ESRCH || zombie(child) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the program's child %d outlived Close", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitFor gives up at its context's deadline and shows the screen.
func TestWaitForFailsWithTheScreen(t *testing.T) {
	term := start(t, 30, 4, "sh", "-c", `echo something else; exec sleep 60`)
	if _, err := term.WaitText(waitCtx(t), "something"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := term.WaitText(ctx, "never shown")
	if err == nil || !strings.Contains(err.Error(), `"never shown"`) || !strings.Contains(err.Error(), "|something else") {
		t.Fatalf("error %v, want the awaited text and the screen", err)
	}
}

// WaitFor stops waiting when the terminal is gone.
func TestWaitForEndsWithTheTerminal(t *testing.T) {
	term := start(t, 30, 4, "sh", "-c", `echo bye`)
	_, err := term.WaitText(waitCtx(t), "never shown")
	if err == nil || !strings.Contains(err.Error(), "terminal is gone") {
		t.Fatalf("error %v, want the terminal gone", err)
	}
}

// A Term from Open serves a program the caller runs itself: whatever is
// written to its TTY is drawn, and the program's queries are answered
// (here the cursor position report a TUI asks for).
func TestOpenAnswersQueries(t *testing.T) {
	term, err := vtpty.Open(40, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	tty := term.TTY()
	// Raw mode, so the reply is readable as soon as it arrives: the
	// emulator's answers reach the terminal on a goroutine of their own,
	// and in cooked mode a line typed now could end before the reply came.
	state, err := xterm.MakeRaw(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer xterm.Restore(int(tty.Fd()), state)
	if _, err := tty.WriteString("\033[3;7H\033[6nat 3,7"); err != nil {
		t.Fatal(err)
	}
	if _, err := term.WaitText(waitCtx(t), "at 3,7"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	tty.SetReadDeadline(time.Now().Add(deadline))
	var got string
	for !strings.Contains(got, "R") {
		n, err := tty.Read(buf)
		if err != nil {
			t.Fatalf("read the reply: %v (so far %q)", err, got)
		}
		got += string(buf[:n])
	}
	if !strings.Contains(got, "\x1b[3;7R") {
		t.Fatalf("reply %q, want the cursor position report ESC[3;7R", got)
	}
}
