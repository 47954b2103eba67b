//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
	"syscall"
)

const unsupported = "an OS sandbox on " + runtime.GOOS

// Launch is one sandboxed start; on this platform there is none.
type Launch struct{}

// Wrap refuses: this platform has no sandbox yet, and an agent process is
// never run unconfined unless the operator set sandbox.mode: off.
func Wrap(cmd *exec.Cmd, p Policy) (*Launch, error) { return nil, Unavailable(unsupported) }

// Abort does nothing.
func (l *Launch) Abort() {}

// Started does nothing.
func (l *Launch) Started() error { return nil }

// Release does nothing.
func (l *Launch) Release() {}

// Exit reports nothing.
func (l *Launch) Exit() (syscall.Signal, string) { return 0, "" }

// Probe reports the sandbox missing.
func Probe(s Settings, p Policy) Report {
	mode := s.Mode
	if mode == "" {
		mode = ModeWorkspaceWrite
	}
	net := "on"
	if s.NoNetwork {
		net = "off"
	}
	return Report{Mode: mode, Network: net, Missing: []string{unsupported}, Error: Unavailable(unsupported).Error()}
}

func missingFeature(p Policy) string {
	if p.simulateMissing != "" {
		return p.simulateMissing
	}
	return unsupported
}
