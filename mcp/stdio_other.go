//go:build !linux

package mcp

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/sandbox"
)

// errStdioUnsupported refuses stdio servers where the Host cannot own the
// server's process tree (start markers, group kill, reaping).
var errStdioUnsupported = demiurge.Errorf(demiurge.EUNSUPPORTED,
	"stdio MCP servers are supported on Linux only: the Host cannot own the server's process tree here")

func (m *Manager) startStdio(context.Context, Declaration, []string, string, *sandbox.Policy) (*stdioProc, error) {
	return nil, errStdioUnsupported
}
