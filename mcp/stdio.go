package mcp

import (
	"context"
	"io"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
)

// stdioProc is one stdio server: its process, owned by the process
// manager, and its stderr capture.
type stdioProc struct {
	m      *Manager
	id     string
	srv    *process.Server
	stderr *stderrCapture
}

func (p *stdioProc) stdin() io.WriteCloser { return p.srv.Stdin() }
func (p *stdioProc) stdout() io.ReadCloser { return p.srv.Stdout() }

// shutdown ends the server the way the MCP stdio transport asks: stdin is
// closed and the server has grace to exit; then whatever is left of its
// tree is terminated and reaped by the process manager, and the captured
// stderr is redacted and appended to the log. It blocks until all of that
// is done. conn.close calls it once.
func (p *stdioProc) shutdown(grace time.Duration, secrets resolvedSecrets) {
	if err := p.srv.Stop(context.Background(), grace); err != nil {
		p.m.log.Warn("mcp: stdio server tree not fully terminated", "server", p.id, "pid", p.srv.PID(), "error", demiurge.ErrorMessage(err))
	}
	text, truncated := p.stderr.text()
	if err := p.m.stderrLog.append(p.id, text, truncated, secrets.red); err != nil {
		p.m.log.Warn("mcp: cannot append server stderr to the log", "server", p.id, "error", err.Error())
	}
}

// alive reports whether the server's process has not exited yet.
func (p *stdioProc) alive() bool {
	select {
	case <-p.srv.Exited():
		return false
	default:
		return true
	}
}
