package pyworker

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
)

// executable is the program the worker runs: the configured interpreter
// itself, or, when that is a script (a version manager's shim such as
// pyenv's, which starts the real interpreter as a child process, something
// the worker's process filter refuses), the interpreter the script starts.
// That one is asked of the script once, as the worker would start (spec:
// its environment and sandbox, without the process filter), and
// remembered; no authored code runs in it.
func (p *Pool) executable(ctx context.Context, interp string, spec process.ServerSpec) (string, error) {
	if !isScript(interp) {
		return interp, nil
	}
	p.resolvedMu.Lock()
	exe, ok := p.resolved[interp]
	p.resolvedMu.Unlock()
	if ok {
		return exe, nil
	}
	spec.Argv = []string{interp, "-I", "-S", "-c", "import sys; sys.stdout.write(sys.executable)"}
	var stderr tail
	stderr.max = 2 << 10
	spec.Stderr = &stderr
	srv, err := p.opts.Processes.StartServer(ctx, spec)
	if err != nil {
		return "", demiurge.WrapError(demiurge.ErrorCode(err), err, "runtime.python: %s: %s", interp, demiurge.ErrorMessage(err))
	}
	// Stopped and reaped whatever happens; its error changes nothing here.
	defer func() { _ = srv.Stop(context.WithoutCancel(ctx), 0) }()
	select {
	case <-srv.Exited():
	case <-ctx.Done():
		return "", demiurge.Errorf(demiurge.EUNAVAILABLE, "runtime.python: %s did not say which interpreter it runs", interp)
	}
	out, _ := io.ReadAll(io.LimitReader(srv.Stdout(), 4096))
	exe = strings.TrimSpace(string(out))
	if !filepath.IsAbs(exe) || isScript(exe) {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + lastLines(msg, 2)
		}
		return "", demiurge.Errorf(demiurge.ECONFIG, "runtime.python: %s is a script that did not name the interpreter it runs (got %q)%s; set runtime.python to the interpreter itself", interp, exe, msg)
	}
	p.resolvedMu.Lock()
	p.resolved[interp] = exe
	p.resolvedMu.Unlock()
	return exe, nil
}

// isScript reports whether the file at path starts with "#!".
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [2]byte
	n, _ := io.ReadFull(f, head[:])
	return bytes.Equal(head[:n], []byte("#!"))
}
