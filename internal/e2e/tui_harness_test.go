//go:build linux

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/vtpty"
)

// termDeadline bounds each wait on a terminal: generous, for a machine
// shared by several test runs; a wait ends as soon as its condition holds.
const termDeadline = 60 * time.Second

// vtTerm is the demiurge binary on a pseudo-terminal of a fixed size,
// read through a VT emulator: what the tests look at is the screen an
// operator would see.
type vtTerm struct {
	t    *testing.T
	term *vtpty.Term
}

// termEnv is the environment of a program on the test terminal: the
// env's, with a 256-colour xterm and none of the caller's colour settings.
func termEnv(e *env, extra ...string) []string {
	var out []string
	for _, kv := range e.environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM_PROGRAM", "TMUX", "STY":
			continue
		}
		out = append(out, kv)
	}
	return append(append(out, "TERM=xterm-256color"), extra...)
}

// startTerm runs the demiurge binary with args on a cols × rows terminal
// in e's home and workspace, with extraEnv added to its environment. The
// test's cleanup kills and reaps it if it is still running.
func startTerm(t *testing.T, e *env, cols, rows int, extraEnv []string, args ...string) *vtTerm {
	t.Helper()
	cmd := exec.Command(demiurgeBinary(t), args...)
	cmd.Env, cmd.Dir = termEnv(e, extraEnv...), e.workspace
	term, err := vtpty.Start(cmd, cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return &vtTerm{t: t, term: term}
}

func (v *vtTerm) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), termDeadline)
}

// typ types s (text or the keys of vtpty).
func (v *vtTerm) typ(s string) {
	v.t.Helper()
	if err := v.term.Type(s); err != nil {
		v.t.Fatal(err)
	}
}

// line types s and Enter.
func (v *vtTerm) line(s string) {
	v.t.Helper()
	v.typ(s + vtpty.Enter)
}

// waitText waits until some row shows text and returns that screen.
func (v *vtTerm) waitText(text string) *vtpty.Screen {
	v.t.Helper()
	ctx, cancel := v.ctx()
	defer cancel()
	s, err := v.term.WaitText(ctx, text)
	if err != nil {
		v.t.Fatal(err)
	}
	return s
}

// waitFor waits until cond holds for the screen.
func (v *vtTerm) waitFor(what string, cond func(*vtpty.Screen) bool) *vtpty.Screen {
	v.t.Helper()
	ctx, cancel := v.ctx()
	defer cancel()
	s, err := v.term.WaitFor(ctx, what, cond)
	if err != nil {
		v.t.Fatal(err)
	}
	return s
}

// exitCode waits for the program to exit and returns its exit code (-1
// for a signal).
func (v *vtTerm) exitCode() int {
	v.t.Helper()
	ctx, cancel := v.ctx()
	defer cancel()
	st, err := v.term.Wait(ctx)
	if err != nil {
		v.t.Fatal(err)
	}
	return st.ExitCode()
}

// startTUI starts the terminal UI (chat on a terminal) with args and
// waits for its first frame: the status line naming the home's default
// core.
func startTUI(t *testing.T, e *env, cols, rows int, extraEnv []string, args ...string) *vtTerm {
	t.Helper()
	v := startTerm(t, e, cols, rows, extraEnv, append([]string{"chat"}, args...)...)
	v.waitStatus("assistant")
	return v
}

// status is the terminal UI's status line, the bottom row.
func status(s *vtpty.Screen) string { return s.Lines[len(s.Lines)-1] }

// waitStatus waits until the status line shows text.
func (v *vtTerm) waitStatus(text string) *vtpty.Screen {
	v.t.Helper()
	return v.waitFor(fmt.Sprintf("the status line showing %q", text), func(s *vtpty.Screen) bool {
		return strings.Contains(status(s), text)
	})
}
