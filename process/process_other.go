//go:build !linux

package process

import (
	"os"

	"github.com/demiurge/demiurge"
)

// errUnsupported is returned wherever this platform cannot keep the
// package's guarantees: identifying a process beyond its pid, finding
// descendants that left the command's group, never signalling a reused
// pid.
var errUnsupported = demiurge.Errorf(demiurge.EUNSUPPORTED,
	"owned process trees are supported on Linux only (start markers, /proc, child subreaper)")

func platformInit() error { return errUnsupported }

// sysState is empty: no Manager is ever created here.
type sysState struct{}

func (s *sysState) start(*Manager) {}
func (s *sysState) stop()          {}

func (m *Manager) spawn(Spec, string, bool) (*Handle, error)       { return nil, errUnsupported }
func (m *Manager) spawnServer(ServerSpec, string) (*Server, error) { return nil, errUnsupported }

// KillGroupIfSame is unsupported: without a start marker a reused pid
// cannot be told from the recorded process, and signalling it is refused.
func KillGroupIfSame(pid int, marker string) error { return errUnsupported }

// LeftInTree needs /proc: no process is ever reported left.
func LeftInTree(int, string) bool { return false }

// TreeMember needs /proc: no process is ever reported.
func TreeMember(string) int { return 0 }

// startWriteback has no portable equivalent; the final fsync does it all.
func startWriteback(*os.File, int64, int64) {}
