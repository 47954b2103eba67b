//go:build !linux

package mcp

import (
	"os"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
)

// errStdioUnsupported refuses stdio servers where the Host cannot own the
// server's process tree (start markers, group kill, reaping).
var errStdioUnsupported = demiurge.Errorf(demiurge.EUNSUPPORTED,
	"stdio MCP servers are supported on Linux only: the Host cannot own the server's process tree here")

type stdioProc struct {
	stdin, stdout *os.File
}

func (m *Manager) startStdio(Declaration, []string, string, *sandbox.Policy) (*stdioProc, error) {
	return nil, errStdioUnsupported
}

func (p *stdioProc) shutdown(time.Duration, resolvedSecrets) {}
func (p *stdioProc) alive() bool                             { return false }

type spawner struct{}

func newSpawner() *spawner { return &spawner{} }
func (s *spawner) close()  {}
