//go:build !linux

package process

import (
	"errors"
	"os"
	"syscall"

	"github.com/demiurge/demiurge"
)

// StartMarker is unsupported off Linux: there is no portable, cheap source of
// a process start time that survives pid reuse.
func StartMarker(pid int) (string, error) {
	return "", demiurge.Errorf(demiurge.EUNSUPPORTED, "process start markers are not supported on this platform")
}

// Alive reports whether some process holds pid. marker is ignored: off Linux
// a reused pid is indistinguishable from the original process, so this is a
// weaker guarantee and callers must also rely on a lease expiry. When the
// platform cannot answer (Windows has no signal 0), Alive reports true: a
// wrong "alive" only delays reconciliation, a wrong "dead" would mark live
// work lost.
func Alive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false // on Windows: no such process
	}
	defer p.Release()
	err = p.Signal(syscall.Signal(0))
	switch {
	case err == nil:
		return true
	case errors.Is(err, os.ErrProcessDone), errors.Is(err, syscall.ESRCH):
		return false
	default:
		return true // EPERM (exists, not ours) or signal unsupported
	}
}
