package mcp

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/urlpolicy"
)

// Defaults of Options.
const (
	DefaultMaxConcurrentConnects = 4
	DefaultNegativeTTL           = 30 * time.Second
	DefaultCloseGrace            = 2 * time.Second
)

// Options configure a Manager. Every field is Host configuration; nothing
// an Agent Core declares reaches them.
type Options struct {
	// URLPolicy judges streamable HTTP servers before connect approval and
	// again on every connection and redirect.
	URLPolicy urlpolicy.Policy
	// BaseEnv returns the allowlisted Host variables (KEY=VALUE) a stdio
	// server inherits, the same allowlist the terminal applies. Nil gives
	// a server PATH only.
	BaseEnv func() []string
	// Getenv reads the Host environment for ${NAME} interpolation of
	// declared env and header values. Nil means os.Getenv.
	Getenv func(string) string
	// PrivateHome returns the private HOME directory of a stdio server
	// (created 0700 if missing). Nil uses a directory under the system
	// temporary directory that Close removes.
	PrivateHome func(serverID string) string
	// Sandbox confines every stdio server (package sandbox): the zero
	// value sandboxes with network; Settings.Mode off runs servers
	// unconfined.
	Sandbox sandbox.Profile
	// LogDir receives mcp-stderr.log (directory 0700, file 0600); "" keeps
	// no stderr.
	LogDir string
	// MaxConcurrentConnects bounds discoveries running at once across the
	// whole Manager (every session); default 4.
	MaxConcurrentConnects int
	// NegativeTTL is how long a failed server is not retried; default 30 s.
	NegativeTTL time.Duration
	// CloseGrace is how long a stdio server has to exit after its stdin is
	// closed before its process tree is terminated; default 2 s.
	CloseGrace time.Duration
	// Processes runs the stdio servers. The Host passes its own, so that
	// one manager owns (and reaps) every child of the Host and closes
	// after this Manager. Nil: NewManager starts a private one, which
	// Close closes.
	Processes *process.Manager
	// Logger receives lifecycle warnings, never argument, environment or
	// header values. Default: discard.
	Logger *slog.Logger
	// Now is the clock of the negative cache; default time.Now.
	Now func() time.Time
}

// Manager is the MCP client runtime of one Host: the connections of every
// session scope, the discovery semaphore and the owned goroutines. It is
// safe for concurrent use. See the package doc.
type Manager struct {
	opts      Options
	log       *slog.Logger
	sem       chan struct{} // one token per discovery in progress
	procs     *process.Manager
	procsErr  error // why there is no process manager (procs nil)
	ownProcs  bool  // procs is private: Close closes it
	stderrLog *stderrLog
	wg        sync.WaitGroup // owned goroutines: closers, session watchers

	mu       sync.Mutex // guards closed, scopes, homeBase
	closed   bool
	scopes   map[scopeKey]*scope
	homeBase string // default private-home root, created on first use
}

var errManagerClosed = demiurge.Errorf(demiurge.EUNAVAILABLE, "MCP runtime is closed")

// NewManager returns a Manager with opts' defaults filled in.
func NewManager(opts Options) *Manager {
	if opts.MaxConcurrentConnects <= 0 {
		opts.MaxConcurrentConnects = DefaultMaxConcurrentConnects
	}
	if opts.NegativeTTL <= 0 {
		opts.NegativeTTL = DefaultNegativeTTL
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = DefaultCloseGrace
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Manager{
		opts:      opts,
		log:       log,
		sem:       make(chan struct{}, opts.MaxConcurrentConnects),
		procs:     opts.Processes,
		stderrLog: &stderrLog{dir: opts.LogDir},
		scopes:    make(map[scopeKey]*scope),
	}
	if m.procs == nil {
		// Where processes cannot be owned (not Linux) stdio servers are
		// refused anyway; procsErr says why.
		m.procs, m.procsErr = process.NewManager(process.ManagerOptions{Logger: log})
		m.ownProcs = m.procsErr == nil
	}
	return m
}

// Close evicts every scope, cancels preparations in progress, closes every
// connection (stdio process trees ended and reaped), waits for the
// goroutines the Manager owns and closes a private process manager. When
// ctx ends first it returns ETIMEOUT; the shutdown still completes in the
// background. Closing twice is harmless. Definitions after Close
// contribute no tools.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	already := m.closed
	m.closed = true
	for k, s := range m.scopes {
		delete(m.scopes, k)
		s.evictLocked()
		m.retireLocked(s)
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		if !already {
			if m.ownProcs {
				if err := m.procs.Close(context.Background()); err != nil {
					m.log.Warn("mcp: process manager close", "error", demiurge.ErrorMessage(err))
				}
			}
			m.mu.Lock()
			base := m.homeBase
			m.mu.Unlock()
			if base != "" {
				_ = os.RemoveAll(base)
			}
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "MCP runtime close: %v", ctx.Err())
	}
}

// closeLater closes c on a goroutine the Manager owns, so that a slow
// shutdown (a server given its grace, a DELETE to a stalled HTTP server)
// never holds up a turn.
func (m *Manager) closeLater(c *conn) {
	if c == nil {
		return
	}
	m.wg.Go(c.close)
}

// baseEnv is what a stdio server inherits from the Host.
func (m *Manager) baseEnv() []string {
	if m.opts.BaseEnv != nil {
		return m.opts.BaseEnv()
	}
	if p := os.Getenv("PATH"); p != "" {
		return []string{"PATH=" + p}
	}
	return nil
}

// defaultHomeBase creates, once, the directory holding the servers'
// private homes when the Host named none.
func (m *Manager) defaultHomeBase() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.homeBase != "" {
		return m.homeBase, nil
	}
	dir, err := os.MkdirTemp("", "demiurge-mcp-home-")
	if err != nil {
		return "", demiurge.WrapError(demiurge.EINTERNAL, err, "MCP private home: %s", reason(err))
	}
	m.homeBase = dir
	return dir, nil
}

// begin admits one operation (a preparation, a check) that may start
// owned goroutines; false once the Manager is closed. end must follow.
// Holding the WaitGroup for the operation's length keeps Close's Wait from
// racing the operation's own Adds.
func (m *Manager) begin() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	return true
}

func (m *Manager) end() { m.wg.Done() }

// acquire takes a discovery slot, or fails when ctx ends first.
func (m *Manager) acquire(ctx context.Context) error {
	select {
	case m.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) release() { <-m.sem }
