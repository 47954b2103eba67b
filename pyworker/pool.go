package pyworker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/starlark"
)

// Defaults of Options.
const (
	DefaultPython       = "python3"
	DefaultTimeout      = 30 * time.Second
	DefaultMaxSource    = 1 << 20
	DefaultMaxProcesses = 256
)

// Options configure a Pool.
type Options struct {
	// Python is the interpreter (config.yaml runtime.python): a name looked
	// up on the Host's PATH or a path. "" is python3.
	Python string
	// Processes starts and supervises the workers. Required.
	Processes *process.Manager
	// Sandbox is the terminal sandbox profile; each worker runs in it with
	// only its scratch directory writable, and without the network unless
	// the call grants it.
	Sandbox sandbox.Profile
	// Scratch returns the private HOME of the worker with key (created
	// 0700 if missing). Required.
	Scratch func(key string) string
	// DefaultTimeout bounds a call whose ForeignCall.Timeout is 0.
	DefaultTimeout time.Duration
	// MaxSource bounds one module source the worker imports.
	MaxSource int
	// MemoryLimit is the allocation budget of each ctx built-in call.
	MemoryLimit int64
	// MaxProcesses is the worker's RLIMIT_NPROC (processes and threads).
	MaxProcesses int
	// LookPath resolves an interpreter name (default exec.LookPath).
	LookPath func(string) (string, error)
	Logger   *slog.Logger
}

// Pool runs foreign calls on one worker per key (core revision). It is safe
// for concurrent use; Close stops every worker.
type Pool struct {
	opts Options

	mu      sync.Mutex
	workers map[string]*worker // by key
	closed  bool
	retired sync.WaitGroup // goroutines stopping retired workers

	// resolvedMu guards resolved (taken under mu: workers start with mu held).
	resolvedMu sync.Mutex
	resolved   map[string]string // interpreter script -> the executable it runs
}

var _ starlark.ForeignRunner = (*Pool)(nil)

// New returns a Pool; no worker starts before the first call.
func New(opts Options) *Pool {
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.MaxSource <= 0 {
		opts.MaxSource = DefaultMaxSource
	}
	if opts.MaxProcesses <= 0 {
		opts.MaxProcesses = DefaultMaxProcesses
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pool{opts: opts, workers: map[string]*worker{}, resolved: map[string]string{}}
}

// Interpreter resolves the configured interpreter to an absolute path. The
// error is one line naming runtime.python (ECONFIG).
func (p *Pool) Interpreter() (string, error) { return p.interpreter() }

func (p *Pool) interpreter() (string, error) {
	name := p.opts.Python
	if name == "" {
		name = DefaultPython
	}
	resolved, err := p.opts.LookPath(name)
	if err != nil {
		return "", demiurge.Errorf(demiurge.ECONFIG, "runtime.python: interpreter %q not found (module.py slots and tools need Python 3; set runtime.python in config.yaml)", name)
	}
	abs, err := filepath.Abs(resolved)
	if err != nil {
		return "", demiurge.Errorf(demiurge.ECONFIG, "runtime.python: interpreter %q: %v", name, err)
	}
	return abs, nil
}

func (p *Pool) scratch(key string) (string, error) {
	if p.opts.Scratch == nil {
		return "", demiurge.Errorf(demiurge.EINTERNAL, "python worker: no scratch directory configured")
	}
	dir := p.opts.Scratch(key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", demiurge.WrapError(demiurge.EINTERNAL, err, "python worker: scratch directory %s: %s", dir, demiurge.IOReason(err))
	}
	return dir, nil
}

// CallForeign runs call on the worker of call.WorkerKey, starting it first
// if needed (see starlark.ForeignRunner for the errors). A call made from
// inside a ctx built-in of a running invocation of the same worker runs
// nested in it.
func (p *Pool) CallForeign(ctx context.Context, call starlark.ForeignCall) (starlark.ForeignReturn, error) {
	params, err := invocation(call)
	if err != nil {
		return starlark.ForeignReturn{}, err
	}
	if r, ok := ctx.Value(reentryKey{}).(*reentry); ok && r.w.key == call.WorkerKey && !r.w.isDead() {
		r.mu.Lock()
		defer r.mu.Unlock()
		return p.invoke(ctx, r.w, call, params)
	}
	for {
		w, err := p.get(ctx, call)
		if err != nil {
			return starlark.ForeignReturn{}, err
		}
		w.mu.Lock()
		if w.isDead() { // killed while this call waited
			w.mu.Unlock()
			continue
		}
		ret, err := p.invoke(ctx, w, call, params)
		w.mu.Unlock()
		return ret, err
	}
}

// get returns the live worker of the call's key, starting one; workers of
// the same core under another key (an older revision) are retired.
func (p *Pool) get(ctx context.Context, call starlark.ForeignCall) (*worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "python worker: the Host is closing")
	}
	for key, w := range p.workers {
		if w.core == call.Core && key != call.WorkerKey {
			delete(p.workers, key)
			p.retire(w)
		}
	}
	if w, ok := p.workers[call.WorkerKey]; ok {
		if !w.isDead() {
			return w, nil
		}
		delete(p.workers, call.WorkerKey)
	}
	w, err := p.startWorker(ctx, call.WorkerKey, call.Core, call.Network)
	if err != nil {
		return nil, err
	}
	p.workers[call.WorkerKey] = w
	return w, nil
}

// retire stops w once its running invocation (if any) ends, on a goroutine
// Close waits for.
func (p *Pool) retire(w *worker) {
	p.retired.Go(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.stop()
	})
}

// Workers returns the keys of the running workers, sorted by nothing in
// particular (for tests and the operator view).
func (p *Pool) Workers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.workers))
	for k, w := range p.workers {
		if !w.isDead() {
			out = append(out, k)
		}
	}
	return out
}

// PID returns the process id of the worker of key (0 when none runs).
func (p *Pool) PID(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[key]; ok && !w.isDead() {
		return w.srv.PID()
	}
	return 0
}

// Close kills every worker (a running call fails) and waits for them.
func (p *Pool) Close(context.Context) error {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.workers))
	for _, w := range p.workers {
		ws = append(ws, w)
	}
	p.workers = map[string]*worker{}
	p.mu.Unlock()
	for _, w := range ws {
		w.kill()
	}
	p.retired.Wait()
	return nil
}

var sanitize = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]`) })

// invocation builds the invoke request of call: the synthetic package of the
// component (named as the original names it), its search path and the
// dotted module to import.
func invocation(call starlark.ForeignCall) (invokeParams, error) {
	rel, err := filepath.Rel(call.CoreDir, call.ModulePath)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || !strings.HasSuffix(rel, ".py") {
		return invokeParams{}, demiurge.Errorf(demiurge.EINVALID, "python module %s is not a .py file inside the core", call.ModulePath)
	}
	rel = filepath.ToSlash(rel)
	comp := call.Component
	var dir, module string
	if inner, ok := strings.CutPrefix(rel, comp+"/"); ok && comp != "" {
		dir, module = comp, strings.ReplaceAll(strings.TrimSuffix(inner, ".py"), "/", ".")
	} else {
		dir, module = path.Dir(rel), strings.TrimSuffix(path.Base(rel), ".py")
	}
	search := []string{dir}
	if strings.HasPrefix(comp, "agent/") {
		if info, err := os.Stat(filepath.Join(call.CoreDir, "agent", "lib")); err == nil && info.IsDir() {
			search = append(search, "agent/lib")
		}
	}
	sum := sha256.Sum256([]byte(filepath.Join(call.CoreDir, filepath.FromSlash(dir))))
	pkg := "_demiurge_slot_" + call.Kind + "_" + sanitize().ReplaceAllString(path.Base(comp), "_") + "_" + hex.EncodeToString(sum[:])[:12]
	fn := call.Function
	return invokeParams{
		Kind: call.Kind, Package: pkg, Search: search, Module: module, ModulePath: rel,
		Entrypoint: module + ":" + fn, Function: fn, Roots: []string{"agent/", dir + "/"},
		Args: call.Args,
	}, nil
}

// ProbeReport is what Probe found: the interpreter, the version it
// reported and whether a worker started in the sandbox.
type ProbeReport struct {
	Interpreter string `json:"interpreter"`
	Version     string `json:"version,omitempty"`
	Started     bool   `json:"worker_started"`
	Error       string `json:"error,omitempty"`
}

// Probe starts a worker as a call would (sandboxed, no network), reads its
// ready line and stops it.
func (p *Pool) Probe(ctx context.Context) ProbeReport {
	rep := ProbeReport{Interpreter: cmpOr(p.opts.Python, DefaultPython)}
	abs, err := p.interpreter()
	if err != nil {
		rep.Error = demiurge.ErrorMessage(err)
		return rep
	}
	rep.Interpreter = abs
	w, err := p.startWorker(ctx, "doctor", "doctor", false)
	if err != nil {
		rep.Error = demiurge.ErrorMessage(err)
		return rep
	}
	rep.Version, rep.Started = w.python, true
	w.stop()
	return rep
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
