//go:build linux

package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/vtpty"
)

// idleBound is the most CPU the idle UI may use, in percent of one core:
// far above what it uses (a fraction of a percent: the renderer's frame
// ticker and the Host's polls) and far below a busy loop (a whole core).
// The race detector multiplies every cost.
func idleBound() float64 {
	if raceEnabled {
		return 25
	}
	return 5
}

// idleChildEnv names the home of the UI TestIdleChild runs; unset, that
// test does nothing.
const idleChildEnv = "DEMIURGE_TUI_IDLE_CHILD_HOME"

// The UI on a terminal, idle with nothing to show, neither draws nor
// spins: over five seconds it writes nothing to the terminal and its
// process uses a small share of one core. The UI runs in a process of its
// own (this test binary, as TestIdleChild) on a real pseudo-terminal, and
// the CPU time is that process's (utime+stime): a loaded machine slows it
// down, never up.
func TestIdleUIIsIdle(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), idleChildEnv+"="+t.TempDir(), "TERM=xterm-256color")
	cmd.Dir = t.TempDir()
	term, err := vtpty.Start(cmd, 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := term.WaitText(ctx, placeholder); err != nil {
		t.Fatal(err)
	}
	settle(t, term)

	bytes := term.Screen().Bytes
	before := cpuTicks(t, term.Pid())
	start := time.Now()
	time.Sleep(5 * time.Second)
	used := float64(cpuTicks(t, term.Pid())-before) / userHZ / time.Since(start).Seconds() * 100
	if drawn := term.Screen().Bytes - bytes; drawn != 0 {
		t.Errorf("the idle UI wrote %d bytes to the terminal in 5 s", drawn)
	}
	if used > idleBound() {
		t.Errorf("the idle UI used %.1f %% of a core over 5 s, want under %.0f %%", used, idleBound())
	}
	t.Logf("idle CPU %.2f %% of a core", used)

	if err := term.Type(vtpty.CtrlD); err != nil {
		t.Fatal(err)
	}
	st, err := term.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode() != 0 {
		t.Fatalf("the UI exited with %v:\n%s", st, term.Screen())
	}
}

// TestIdleChild is the UI TestIdleUIIsIdle measures: on this process's
// terminal, over a Host on the home idleChildEnv names.
func TestIdleChild(t *testing.T) {
	home := os.Getenv(idleChildEnv)
	if home == "" {
		t.Skip("runs only as TestIdleUIIsIdle's child")
	}
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	ws, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, Options{Host: h, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
}

// settle waits until the terminal's output has been still for a second:
// the first frames, the terminal's replies and the window size are done.
func settle(t *testing.T, term *vtpty.Term) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last, since := term.Screen().Bytes, time.Now()
	for time.Since(since) < time.Second {
		if time.Now().After(deadline) {
			t.Fatal("the terminal's output never settled")
		}
		time.Sleep(100 * time.Millisecond)
		if b := term.Screen().Bytes; b != last {
			last, since = b, time.Now()
		}
	}
}

// userHZ is the unit of the times in /proc/<pid>/stat.
const userHZ = 100

// cpuTicks is process pid's user plus system time so far in USER_HZ
// ticks (fields 14 and 15 of /proc/<pid>/stat).
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // f[0] is field 3
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %d fields after the command name: %q", pid, len(f), s)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return utime + stime
}
