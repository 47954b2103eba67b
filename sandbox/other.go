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

func staticMissing() []string { return []string{unsupported} }

func landlockABI() int { return 0 }

func probeHelper(Policy) error { return Unavailable(unsupported) }
