package process

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// Defaults of the lifecycle timings.
const (
	// DefaultKillGrace is how long a tree has to exit after SIGTERM before
	// SIGKILL.
	DefaultKillGrace = 250 * time.Millisecond
	// defaultWaitDelay bounds how long output may keep flowing after the
	// command's own process exited, while descendants still hold its pipes.
	defaultWaitDelay = 2 * time.Second
	// drainJoin bounds the wait for the pipes to reach EOF once the tree
	// is gone; a holder the Manager could not attribute loses its pipe then.
	drainJoin = time.Second
	// killWait bounds the SIGKILL phase (a process in uninterruptible
	// sleep dies only when its I/O completes).
	killWait = 5 * time.Second
	// pollInterval is how often a terminating tree is re-examined.
	pollInterval = 10 * time.Millisecond
	// trackInterval is how often live trees are re-examined to record new
	// descendants and reap adopted ones that exited.
	trackInterval = 100 * time.Millisecond
)

// ManagerOptions configures a Manager.
type ManagerOptions struct {
	// ArtifactRoot is the directory of output artifacts
	// (<home>/runtime/artifacts); empty stores none.
	ArtifactRoot string
	// Logger receives lifecycle warnings; it never receives output, argv
	// or environment values. Default: discard.
	Logger *slog.Logger
	// KillGrace is the time between SIGTERM and SIGKILL; default
	// DefaultKillGrace.
	KillGrace time.Duration
}

// Manager runs commands as owned process trees. See the package doc.
type Manager struct {
	root      string
	log       *slog.Logger
	killGrace time.Duration
	waitDelay time.Duration

	// Set only by tests: artifactHook wraps each artifact file's writer,
	// spawnHook learns every spawn id.
	artifactHook func(stream string, w io.Writer) io.Writer
	spawnHook    func(spawnID string)

	mu     sync.Mutex // guards closed, live
	closed bool
	live   map[owned]struct{}

	wg       sync.WaitGroup // one per admitted start and per supervising goroutine
	closeOne sync.Once
	shutdown chan struct{} // closed when Close finished its shutdown

	sys sysState // platform part: process tracking, spawner thread
}

// NewManager returns a Manager. On Linux it makes the Host process a child
// subreaper (once per process), so that orphaned descendants of commands
// reparent to the Host, where they can be found, killed and reaped. On
// other platforms it fails with EUNSUPPORTED: the guarantees of this
// package (no signal to a reused pid, no escaped descendant) cannot be
// kept there yet. ECONFIG reports an unusable artifact root.
func NewManager(opts ManagerOptions) (*Manager, error) {
	if err := platformInit(); err != nil {
		return nil, err
	}
	root, err := artifactRoot(opts.ArtifactRoot)
	if err != nil {
		return nil, err
	}
	m := &Manager{
		root:      root,
		log:       opts.Logger,
		killGrace: opts.KillGrace,
		waitDelay: defaultWaitDelay,
		live:      make(map[owned]struct{}),
		shutdown:  make(chan struct{}),
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.killGrace <= 0 {
		m.killGrace = DefaultKillGrace
	}
	m.sys.start(m)
	return m, nil
}

// Close stops admission (Run, Start and StartServer then fail with
// EUNAVAILABLE), terminates every live tree, servers included, at once
// (SIGTERM, KillGrace, SIGKILL), reaps them and
// waits until everything the Manager started has finished. When ctx ends
// first Close returns its error; the shutdown still completes in the
// background. Closing twice is harmless.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	live := make([]owned, 0, len(m.live))
	for h := range m.live {
		live = append(live, h)
	}
	m.mu.Unlock()
	for _, h := range live {
		h.requestCancel()
	}
	m.closeOne.Do(func() {
		go func() {
			m.wg.Wait()
			m.sys.stop()
			close(m.shutdown)
		}()
	})
	select {
	case <-m.shutdown:
		return nil
	case <-ctx.Done():
		return demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "process manager close: %v", ctx.Err())
	}
}

// admit reserves a place for one start; false once closed.
func (m *Manager) admit() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	return true
}

// owned is what Close ends: a command's Handle or a Server.
type owned interface{ requestCancel() }

// register records a live command or server; a Close that ran in between
// cancels it.
func (m *Manager) register(h owned) {
	m.mu.Lock()
	closed := m.closed
	m.live[h] = struct{}{}
	m.mu.Unlock()
	if closed {
		h.requestCancel()
	}
}

func (m *Manager) unregister(h owned) {
	m.mu.Lock()
	delete(m.live, h)
	m.mu.Unlock()
}

var errClosed = demiurge.Errorf(demiurge.EUNAVAILABLE, "process manager is closed")

// Run starts the command and waits for it. When ctx ends first, the tree is
// terminated and reaped before Run returns, with Result.Cancelled set and
// an ECANCELED error. Run's error otherwise reports only that the command
// could not be started (EINVALID spec, ENOTFOUND executable, EUNAVAILABLE
// closed manager, EINTERNAL); a command that ran returns a nil error
// whatever its exit status, with Result.ArtifactErr reporting a storage
// failure.
func (m *Manager) Run(ctx context.Context, spec Spec) (Result, error) {
	h, err := m.start(ctx, spec, true)
	if err != nil {
		return Result{}, err
	}
	select {
	case <-h.done:
	case <-ctx.Done():
		h.requestCancel()
		<-h.done // termination is bounded: grace, then SIGKILL
		if !h.res.Cancelled {
			break // it had finished on its own
		}
		return h.res, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "process %s cancelled: %v", h.spawnID, ctx.Err())
	}
	return h.res, h.err
}

// Start starts the command in the background and returns at once. ctx
// bounds only the start: the command runs until it exits, its Timeout
// passes, Cancel is called or the Manager closes. When an artifact cannot
// be written the tree is terminated (a background task must not run on
// without its record) and the Result reports ArtifactErr. Errors are those
// of Run's start.
func (m *Manager) Start(ctx context.Context, spec Spec) (*Handle, error) {
	return m.start(ctx, spec, false)
}

func (m *Manager) start(ctx context.Context, spec Spec, foreground bool) (*Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "process start cancelled: %v", err)
	}
	spec, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	resolved, err := resolve(spec.Argv[0], spec.Dir, spec.Env)
	if err != nil {
		return nil, err
	}
	if !m.admit() {
		return nil, errClosed
	}
	h, err := m.spawn(spec, resolved, foreground)
	if err != nil {
		m.wg.Done()
		return nil, err
	}
	return h, nil
}
