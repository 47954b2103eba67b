package starlark

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Defaults of Options.
const (
	DefaultMaxSteps    uint64 = 10_000_000
	DefaultTimeout            = 10 * time.Second
	DefaultMaxSource          = 1 << 20 // bytes of one module's source
	DefaultCacheModule        = 512     // compiled modules kept
)

// Options configures a Runtime. Zero fields take the defaults above.
type Options struct {
	MaxSteps uint64        // step budget of one execution
	Timeout  time.Duration // deadline of one execution
	// MemoryLimit is the allocation budget of one execution, in bytes
	// (default DefaultMemoryLimit); see the package doc.
	MemoryLimit int64
	MaxSource   int // largest accepted module source, in bytes
	CacheSize   int // compiled modules kept (oldest evicted first)
	// Print receives print() output of authored code with the module path.
	// Nil discards it: authored code must not reach the Host's stderr.
	Print func(path, msg string)
}

// fileOptions is the dialect of authored code: while loops, sets and
// top-level control flow are allowed; reassigning globals is not, and
// recursion stays disabled so no authored call can exhaust the Go stack.
var fileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
}

// Runtime compiles and runs authored modules. It is safe for concurrent use.
type Runtime struct {
	opts Options

	mu    sync.Mutex           // guards cache, order
	cache map[cacheKey]*Module // compiled modules by path and content hash
	order []cacheKey           // insertion order, for eviction
}

type cacheKey struct {
	path string
	sum  [sha256.Size]byte
}

// NewRuntime returns a Runtime with opts, defaults filled in.
func NewRuntime(opts Options) *Runtime {
	if opts.MaxSteps == 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	if opts.MaxSource <= 0 {
		opts.MaxSource = DefaultMaxSource
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultCacheModule
	}
	return &Runtime{opts: opts, cache: make(map[cacheKey]*Module)}
}

// Load compiles src as the module at path and executes its top level once
// under the step budget and the runtime's deadline. The path names the module
// in every error and position; it is never opened. A module with the same path
// and content is returned from the cache without running again.
//
// Errors (*demiurge.Error, cause *Error): EINVALID for a source that is too
// large, a syntax or resolve error ("<path>:<line>:<col>: <msg>"), a load()
// statement, or a failing top level; ETIMEOUT when the top level overruns.
func (r *Runtime) Load(path string, src []byte) (*Module, error) {
	if len(src) > r.opts.MaxSource {
		return nil, demiurge.Errorf(demiurge.EINVALID, "%s: module source is %d bytes, more than the limit of %d", path, len(src), r.opts.MaxSource)
	}
	key := cacheKey{path: path, sum: sha256.Sum256(src)}
	r.mu.Lock()
	m, ok := r.cache[key]
	r.mu.Unlock()
	if ok {
		return m, nil
	}

	m, err := r.compile(path, src)
	if err != nil {
		return nil, err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.cache[key]; ok {
		// Another goroutine loaded the same content meanwhile: keep one.
		return prev, nil
	}
	r.cache[key] = m
	r.order = append(r.order, key)
	for len(r.order) > r.opts.CacheSize {
		delete(r.cache, r.order[0])
		r.order = r.order[1:]
	}
	return m, nil
}

func (r *Runtime) compile(path string, src []byte) (*Module, error) {
	env := predeclared()
	f, err := fileOptions.Parse(path, src, 0)
	if err != nil {
		return nil, coded(compileError(path, err))
	}
	for _, stmt := range f.Stmts {
		if load, ok := stmt.(*syntax.LoadStmt); ok {
			return nil, coded(&Error{
				Kind: KindCompile, Path: path, Line: int(load.Load.Line), Col: int(load.Load.Col),
				Msg: "load(" + sl.String(load.ModuleName()).String() + ") is not allowed: authored modules have no file access",
			})
		}
	}
	instrument(f)
	prog, err := sl.FileProgram(f, env.Has)
	if err != nil {
		return nil, coded(compileError(path, err))
	}
	m := &Module{rt: r, path: path}
	_, err = r.exec(context.Background(), Limits{}, path, func(th *sl.Thread) (sl.Value, error) {
		globals, err := prog.Init(th, env)
		if err == nil {
			m.globals = globals
		}
		return sl.None, err
	})
	if err != nil {
		return nil, err
	}
	// Frozen globals make the module shareable by concurrent calls and stop
	// one call from leaving state behind for the next.
	m.globals.Freeze()
	return m, nil
}

// Limits bounds one execution. Zero fields take the runtime's options.
type Limits struct {
	MaxSteps    uint64
	Timeout     time.Duration
	MemoryLimit int64 // allocation budget in bytes
}

// MemoryLimit returns the runtime's allocation budget of one execution.
func (r *Runtime) MemoryLimit() int64 { return r.opts.MemoryLimit }

// threadContextKey is the thread-local key of the call's context.
const threadContextKey = "demiurge.context"

// Context returns the context of the call running on thread: built-ins pass it
// to anything that blocks, so the call's deadline and cancellation reach them.
// It is context.Background() for a thread this package did not start.
func Context(thread *sl.Thread) context.Context {
	if ctx, ok := thread.Local(threadContextKey).(context.Context); ok {
		return ctx
	}
	return context.Background()
}
