package tuibench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/demiurge/demiurge/internal/vtpty"
)

// startUI runs `bin --home home chat args…` in workspace on a cols × rows
// terminal, with env (the driver's child environment) as a 256-colour
// xterm and none of the caller's colour settings.
func startUI(bin string, env []string, home, workspace string, args ...string) (*vtpty.Term, error) {
	cmd := exec.Command(bin, append([]string{"--home", home, "chat"}, args...)...)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM_PROGRAM", "TMUX", "STY":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	cmd.Dir = workspace
	return vtpty.Start(cmd, cols, rows)
}

// settle waits until the terminal has had no output for quiet: the UI has
// drawn what it had to draw.
func settle(ctx context.Context, term *vtpty.Term, quiet time.Duration) error {
	for {
		s := term.Screen()
		if s.Ended {
			return fmt.Errorf("the terminal is gone; %s", s)
		}
		wait := quiet - time.Since(s.At)
		if wait <= 0 {
			return nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("waiting for the screen to settle: %w; %s", ctx.Err(), s)
		}
	}
}
