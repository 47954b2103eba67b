package tuibench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge/cmd/bench/internal/procstat"
	"github.com/demiurge/demiurge/internal/vtpty"
)

// MeasureSessionRSS seeds a session of messages messages in a home under
// dir, opens it in the UI with `chat --session`, waits for its newest
// message on the screen and for the screen to settle, and reads VmRSS and
// VmHWM of the UI's process.
func MeasureSessionRSS(ctx context.Context, bin string, env []string, dir string, messages int) (m Memory, err error) {
	ctx, cancel := context.WithTimeout(ctx, measureTimeout)
	defer cancel()
	home, workspace := filepath.Join(dir, "home"), filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return m, err
	}
	sessionID, newest, err := SeedSession(ctx, home, messages)
	if err != nil {
		return m, err
	}
	term, err := startUI(bin, env, home, workspace, "--session", sessionID)
	if err != nil {
		return m, err
	}
	defer term.Close()
	if _, err := term.WaitFor(ctx, fmt.Sprintf("%q on the screen", newest), func(s *vtpty.Screen) bool {
		return strings.Contains(s.Text(), newest)
	}); err != nil {
		return m, err
	}
	if err := settle(ctx, term, quiet); err != nil {
		return m, err
	}
	st, err := procstat.Status(fmt.Sprintf("/proc/%d/status", term.Pid()))
	if err != nil {
		return m, err
	}
	return Memory{RSS: st["VmRSS"], HWM: st["VmHWM"], Messages: messages}, nil
}
