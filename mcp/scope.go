package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
)

// scopeKey identifies the MCP state of one session scope: the session, the Host-issued scope of a delegated
// child ("" for the session itself), the core and the workspace.
// Different scopes never share connections and prepare concurrently.
type scopeKey struct {
	session   string
	scope     string
	core      string
	workspace string
}

// scope is the MCP state of one scopeKey.
type scope struct {
	key scopeKey
	// token is held by the one preparation running in the scope; an
	// evicted scope's token is taken for good by its retirement.
	token chan struct{}
	dead  chan struct{} // closed on eviction
	// retired is closed once an evicted scope's connections are closed.
	retired chan struct{}

	// Guarded by Manager.mu.
	evicted     bool
	cancelBuild context.CancelFunc
	statuses    []ServerStatus
	updated     time.Time

	// Guarded by token.
	authority string
	servers   map[string]*serverState
}

// Server states.
const (
	StateConnected    = "connected"
	StateFailed       = "failed"
	StateDenied       = "denied"
	StateNotConnected = "not_connected"
	StateDisabled     = "disabled"
)

// serverState is what a scope knows of one declared server.
type serverState struct {
	decl       Declaration
	policy     policy.Policy // effective connect policy it was authorised under
	state      string
	conn       *conn
	tools      []toolInfo
	skipped    []string
	err        string
	retryAfter time.Time
}

func newScope(k scopeKey) *scope {
	return &scope{
		key: k, token: make(chan struct{}, 1), dead: make(chan struct{}), retired: make(chan struct{}),
		servers: map[string]*serverState{},
	}
}

// evictLocked marks s evicted and cancels its preparation; the caller
// holds Manager.mu, has removed s from the map and calls retire next.
func (s *scope) evictLocked() {
	if s.evicted {
		return
	}
	s.evicted = true
	close(s.dead)
	if s.cancelBuild != nil {
		s.cancelBuild()
	}
}

// retireLocked closes every connection of an evicted scope once the
// preparation running in it (if any) has given up its token. The caller
// holds Manager.mu, so Close cannot be waiting on an empty WaitGroup.
func (m *Manager) retireLocked(s *scope) {
	m.wg.Go(func() {
		s.token <- struct{}{} // never given back: the scope is gone
		var wg sync.WaitGroup
		for _, st := range s.servers {
			if st.conn != nil {
				wg.Go(st.conn.close)
			}
		}
		wg.Wait()
		s.servers = nil
		close(s.retired)
	})
}

// evict removes every scope match selects and closes its connections. It
// waits for the closing until ctx ends (ETIMEOUT then; the closing goes on
// in the background).
func (m *Manager) evict(ctx context.Context, match func(scopeKey) bool) error {
	for _, s := range m.evictLater(match) {
		select {
		case <-s.retired:
		case <-ctx.Done():
			return demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "MCP eviction did not finish in time")
		}
	}
	return nil
}

// evictLater removes every scope match selects and starts closing its
// connections; it returns the scopes, whose retired channels close when
// that is done.
func (m *Manager) evictLater(match func(scopeKey) bool) []*scope {
	m.mu.Lock()
	var gone []*scope
	for k, s := range m.scopes {
		if match(k) {
			delete(m.scopes, k)
			s.evictLocked()
			m.retireLocked(s)
			gone = append(gone, s)
		}
	}
	m.mu.Unlock()
	return gone
}

// EvictSession drops every MCP scope of sessionID (its own and its
// delegated children's): preparations in progress are cancelled and every
// connection is closed. Other sessions are untouched. It is called when
// the Host starts or resumes another session, and on explicit eviction.
func (m *Manager) EvictSession(ctx context.Context, sessionID string) error {
	return m.evict(ctx, func(k scopeKey) bool { return k.session == sessionID })
}

// EvictScope drops the MCP state of one Host-issued scope (Request.ScopeID)
// of sessionID: a delegated child's connections are released when the
// child completes.
func (m *Manager) EvictScope(ctx context.Context, sessionID, scopeID string) error {
	return m.evict(ctx, func(k scopeKey) bool { return k.session == sessionID && k.scope == scopeID })
}

// scopeFor returns the live scope of k, creating it.
func (m *Manager) scopeFor(k scopeKey) (*scope, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errManagerClosed
	}
	s := m.scopes[k]
	if s == nil {
		s = newScope(k)
		m.scopes[k] = s
	}
	return s, nil
}

// enter takes the token of k's live scope, waiting for a preparation in
// progress there. The returned context is cancelled by eviction of the
// scope or ctx's end; leave must be called with it.
func (m *Manager) enter(ctx context.Context, k scopeKey) (*scope, context.Context, error) {
	for {
		s, err := m.scopeFor(k)
		if err != nil {
			return nil, nil, err
		}
		select {
		case s.token <- struct{}{}:
		case <-s.dead:
			continue // evicted meanwhile: a fresh scope takes its place
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		bctx, cancel := context.WithCancel(ctx)
		m.mu.Lock()
		if s.evicted {
			m.mu.Unlock()
			cancel()
			<-s.token
			continue
		}
		s.cancelBuild = cancel
		m.mu.Unlock()
		return s, bctx, nil
	}
}

// leave publishes statuses (unless the scope was evicted meanwhile, which
// it reports) and gives the token back.
func (m *Manager) leave(s *scope, statuses []ServerStatus) (evicted bool) {
	m.mu.Lock()
	if s.cancelBuild != nil {
		s.cancelBuild()
		s.cancelBuild = nil
	}
	evicted = s.evicted
	if !evicted {
		s.statuses, s.updated = statuses, m.opts.Now()
	}
	m.mu.Unlock()
	<-s.token
	return evicted
}

// Status reports the servers of decls as last prepared for sessionID's
// own scope (the most recently prepared one when the session used several
// workspaces or cores): connected, failed, denied, disabled, or
// not_connected when no turn has prepared it yet. grants (the core's)
// judge the Host variables of a server no turn has prepared.
func (m *Manager) Status(sessionID string, decls []Declaration, grants policy.Grants) []ServerStatus {
	m.mu.Lock()
	var latest *scope
	for k, s := range m.scopes {
		if k.session == sessionID && k.scope == "" && (latest == nil || s.updated.After(latest.updated)) {
			latest = s
		}
	}
	var known []ServerStatus
	if latest != nil {
		known = append(known, latest.statuses...)
	}
	m.mu.Unlock()
	byID := map[string]ServerStatus{}
	for _, st := range known {
		byID[st.Server] = st
	}
	out := make([]ServerStatus, 0, len(decls))
	for _, d := range decls {
		st, ok := byID[d.ID]
		if !ok || st.Path != d.RelPath {
			st = baseStatus(d, grants)
		}
		out = append(out, st)
	}
	return out
}
