package pyworker

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
)

// workerSource is the Python half of the protocol, run with python3 -c.
//
//go:embed worker.py
var workerSource string

// startTimeout bounds a worker's start: the interpreter prints its ready
// line in tens of milliseconds.
const startTimeout = 20 * time.Second

// stopGrace is how long a stopped worker has to exit after its stdin closes.
const stopGrace = 500 * time.Millisecond

// worker is one running interpreter. Its invocations are serialised by mu;
// a call made from inside an invocation of the same worker (a slot's
// ctx.tools.call of a Python tool of its core) runs nested on the holder's
// goroutine without taking mu (see reentry).
type worker struct {
	key    string
	core   string
	srv    *process.Server
	stderr *tail
	lines  chan lineOrErr // fed by the reader goroutine until EOF
	reader sync.WaitGroup // the reader goroutine
	python string         // version the worker reported
	exe    string

	mu      sync.Mutex // one invocation chain at a time
	stateMu sync.Mutex // guards dead, seq
	dead    bool       // killed or exited: never used again
	seq     int64
}

type lineOrErr struct {
	msg message
	err error
}

// startWorker starts the interpreter under the sandbox and waits for its
// ready line.
func (p *Pool) startWorker(ctx context.Context, key, core string, network bool) (*worker, error) {
	interp, err := p.interpreter()
	if err != nil {
		return nil, err
	}
	if p.opts.Processes == nil {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker: no process manager")
	}
	scratch, err := p.scratch(key)
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(scratch, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "python worker: scratch directory %s: %s", tmp, demiurge.IOReason(err))
	}
	spec := process.ServerSpec{
		Dir: scratch,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + scratch, "TMPDIR=" + tmp,
			"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PYTHONIOENCODING=utf-8",
			fmt.Sprintf("DEMIURGE_WORKER_NPROC=%d", p.opts.MaxProcesses),
		},
	}
	if p.opts.Sandbox.Settings.Enabled() {
		pol := p.opts.Sandbox.Policy(scratch)
		pol.Network = pol.Network && network
		spec.Sandbox = &pol
	}
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	exe, err := p.executable(sctx, interp, spec)
	if err != nil {
		return nil, err
	}
	spec.Argv = []string{exe, "-I", "-B", "-u", "-c", workerSource}
	if spec.Sandbox != nil {
		// The kernel refuses the worker every new process (RLIMIT_NPROC
		// does not bind a Host running as root); the audit hook of
		// worker.py only words the refusal.
		pol := *spec.Sandbox
		pol.NoProcesses = true
		spec.Sandbox = &pol
	}
	w := &worker{key: key, core: core, stderr: &tail{max: 8 << 10}, lines: make(chan lineOrErr, 1)}
	spec.Stderr = w.stderr
	srv, err := p.opts.Processes.StartServer(sctx, spec)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ErrorCode(err), err, "python worker for core %s: %s", core, demiurge.ErrorMessage(err))
	}
	w.srv = srv
	lr := newLineReader(srv.Stdout())
	w.reader.Go(func() {
		defer close(w.lines)
		for {
			m, err := lr.next()
			w.lines <- lineOrErr{msg: m, err: err}
			if err != nil {
				return
			}
		}
	})
	select {
	case l, ok := <-w.lines:
		if ok && l.err == nil && l.msg.Ready {
			w.python, w.exe = l.msg.Python, l.msg.Executable
			return w, nil
		}
		w.kill()
		return nil, w.exitError(core, "did not start")
	case <-sctx.Done():
		w.kill()
		if ctx.Err() != nil {
			return nil, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "python worker start cancelled")
		}
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker for core %s did not start within %s", core, startTimeout)
	}
}

// exitError describes a worker that went away, with the end of its stderr.
func (w *worker) exitError(core, what string) error {
	msg := strings.TrimSpace(w.stderr.String())
	if msg != "" {
		msg = ": " + lastLines(msg, 3)
	}
	return demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker for core %s %s%s", core, what, msg)
}

// kill stops the worker at once and waits for its reader; it is never used
// again.
func (w *worker) kill() {
	w.stateMu.Lock()
	w.dead = true
	w.stateMu.Unlock()
	if w.srv != nil {
		_ = w.srv.Stop(context.Background(), 0)
	}
	for range w.lines { // drain until the reader sees EOF
	}
	w.reader.Wait()
}

// stop ends the worker gracefully (its stdin closes, it exits).
func (w *worker) stop() {
	w.stateMu.Lock()
	w.dead = true
	w.stateMu.Unlock()
	_ = w.srv.Stop(context.Background(), stopGrace)
	for range w.lines {
	}
	w.reader.Wait()
}

func (w *worker) isDead() bool {
	w.stateMu.Lock()
	defer w.stateMu.Unlock()
	return w.dead
}

func (w *worker) nextID() int64 {
	w.stateMu.Lock()
	defer w.stateMu.Unlock()
	w.seq++
	return w.seq
}

// send writes one line to the worker.
func (w *worker) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "python worker: encode request")
	}
	_, err = w.srv.Stdin().Write(append(b, '\n'))
	return err
}

// tail keeps the last max bytes written to it (the worker's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

var _ io.Writer = (*tail)(nil)

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
