package mcp

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
)

// startStdio starts the server's command with exactly env, in dir, inside
// box when set, through the process manager.
func (m *Manager) startStdio(ctx context.Context, d Declaration, env []string, dir string, box *sandbox.Policy) (*stdioProc, error) {
	if m.procs == nil {
		return nil, demiurge.WrapError(demiurge.EUNAVAILABLE, m.procsErr, "MCP server %s: %s", d.ID, demiurge.ErrorMessage(m.procsErr))
	}
	capture := &stderrCapture{}
	srv, err := m.procs.StartServer(ctx, process.ServerSpec{
		Argv:    append([]string{d.Command}, d.Args...),
		Dir:     dir,
		Env:     env,
		Stderr:  capture,
		Sandbox: box,
	})
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ErrorCode(err), err, "MCP server %s: %s", d.ID, demiurge.ErrorMessage(err))
	}
	return &stdioProc{m: m, id: d.ID, srv: srv, stderr: capture}, nil
}
