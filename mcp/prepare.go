package mcp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

// Request is what one turn's MCP preparation needs.
type Request struct {
	// Declarations are the core's servers (LoadCore), disabled ones
	// included. None evicts the session scope's MCP state.
	Declarations []Declaration
	// Turn is the turn's frozen identity: session, principal, core
	// revision, workspace, capability snapshot, approver.
	Turn effect.TurnContext
	// Gate decides connect approval (ApprovalGate in the Host). Nil means
	// connect authority is not bound to this preparation: every server is
	// denied.
	Gate ConnectGate
	// CoreDir identifies the core in the scope key; "" uses Turn.CoreID.
	CoreDir string
	// ScopeID is the Host-issued scope of a delegated child, released by
	// EvictScope when the child completes; "" is the session's own scope.
	ScopeID string
	// CoreApproval and GlobalApproval are folded into the connect policy.
	CoreApproval, GlobalApproval policy.ApprovalConfig
}

// reasonUnbound is the denial of every server when no gate or principal
// is bound to the preparation.
const reasonUnbound = "MCP connect authority is not bound to tool preparation"

// Definitions prepares the MCP part of one turn's catalog, before any
// provider I/O: it reuses the scope's live connections, authorises and
// discovers the servers that need it, and returns one effect.Definition
// per offered tool, sorted by name, with the status of every declared
// server in declaration order.
//
// It never fails the turn: a server that is denied, fails or times out
// contributes no tools and a status saying why, and the others are
// unaffected. The definitions are frozen for the turn: each one's adapter
// is bound to the connection its tool was listed on; a tools/list_changed
// notification only makes the next preparation list again.
//
// Per enabled server, in declaration order: a connected state with an
// unchanged declaration and a live connection is reused (re-listed first
// if the server announced a change); a failed state inside its negative
// TTL is skipped with its diagnostic; anything else is authorised (the
// mcp.connect:<id> capability, the cwd inside the workspace, the URL
// policy, then Gate; a denial is not cached) and then discovered,
// concurrently with the other servers but at most MaxConcurrentConnects
// at once across the Manager, each bounded by its connect timeout. A
// change of principal, capability snapshot or core revision closes every
// connection of the scope first; a changed declaration or effective
// connect policy closes only its server's.
func (m *Manager) Definitions(ctx context.Context, req Request) ([]effect.Definition, []ServerStatus) {
	tc := req.Turn
	key := scopeKey{session: tc.SessionID, scope: req.ScopeID, core: req.CoreDir, workspace: tc.Workspace}
	key.core = cmp.Or(key.core, tc.CoreID)
	statuses := make([]ServerStatus, len(req.Declarations))
	for i, d := range req.Declarations {
		statuses[i] = baseStatus(d, tc.Grants)
	}
	if len(req.Declarations) == 0 {
		// Nothing declared any more: the scope's connections close in the
		// background; the turn does not wait for them.
		m.evictLater(func(k scopeKey) bool { return k.session == key.session && k.scope == key.scope })
		return nil, nil
	}
	if req.Gate == nil || tc.Scope.PrincipalID == "" || tc.SessionID == "" {
		return nil, markEnabled(statuses, StateDenied, reasonUnbound)
	}
	if !m.begin() {
		return nil, markEnabled(statuses, StateNotConnected, errManagerClosed.Message)
	}
	defer m.end()
	s, bctx, err := m.enter(ctx, key)
	if err != nil {
		why := errorText(err)
		if ctx.Err() != nil {
			why = "MCP preparation cancelled"
		}
		return nil, markEnabled(statuses, StateNotConnected, why)
	}
	policies := map[string]policy.Policy{} // keyed by every enabled server
	var enabled []Declaration
	for _, d := range req.Declarations {
		if d.Enabled {
			enabled = append(enabled, d)
			policies[d.ID] = connectPolicy(d, req.CoreApproval, req.GlobalApproval)
		}
	}
	if auth := authorityKey(tc); auth != s.authority {
		m.closeAll(s)
		s.authority = auth
	}
	for id, st := range s.servers {
		if _, declared := policies[id]; !declared {
			m.closeLater(st.conn) // removed or disabled
			delete(s.servers, id)
		}
	}

	var jobs []discovery
	now := m.opts.Now()
	var root string // the workspace, links resolved once, for the first new connection
	for _, d := range enabled {
		st := s.servers[d.ID]
		if st != nil && (st.decl.Fingerprint != d.Fingerprint || st.policy != policies[d.ID]) {
			// The declaration or its effective connect policy changed:
			// approve it again before a new client exists.
			m.closeLater(st.conn)
			delete(s.servers, d.ID)
			st = nil
		}
		switch {
		case st != nil && st.state == StateConnected && st.conn.alive():
			if st.conn.stale.Load() {
				jobs = append(jobs, discovery{decl: d, conn: st.conn})
			}
			continue
		case st != nil && st.state == StateFailed && now.Before(st.retryAfter):
			continue
		}
		if st != nil {
			m.closeLater(st.conn)
			delete(s.servers, d.ID)
		}
		dir, why := m.authorise(bctx, d, tc, req.Gate, policies[d.ID])
		if why != "" {
			s.servers[d.ID] = &serverState{decl: d, policy: policies[d.ID], state: StateDenied, err: why}
			continue
		}
		if root == "" {
			root = workspaceRoot(tc.Workspace)
		}
		jobs = append(jobs, discovery{decl: d, dir: dir, root: root})
	}

	for _, r := range m.discoverAll(bctx, jobs) {
		switch {
		case r.conn != nil:
			s.servers[r.decl.ID] = &serverState{decl: r.decl, policy: policies[r.decl.ID], state: StateConnected, conn: r.conn, tools: r.tools, skipped: r.skipped}
		case r.cancelled && r.relist != nil:
			r.relist.stale.Store(true) // list again next time; the connection stays
		case r.cancelled:
			delete(s.servers, r.decl.ID)
		default:
			if prev := s.servers[r.decl.ID]; prev != nil {
				m.closeLater(prev.conn)
			}
			s.servers[r.decl.ID] = &serverState{decl: r.decl, policy: policies[r.decl.ID], state: StateFailed, err: r.err, retryAfter: m.opts.Now().Add(m.opts.NegativeTTL)}
		}
	}

	defs := buildDefinitions(enabled, s.servers, statuses, req.Declarations)
	// The values interpolated into connected servers' env and headers are
	// secrets of this turn: every view of every result is redacted with
	// them, whichever tool returns them.
	var secrets []redact.Secret
	for _, d := range enabled {
		if st := s.servers[d.ID]; st != nil && st.conn != nil {
			secrets = append(secrets, st.conn.secrets.red.Secrets()...)
		}
	}
	if len(secrets) > 0 {
		tc.Secrets.Add(secrets...)
	}
	if m.leave(s, statuses) {
		// Eviction won the race: the retirement closes every connection
		// of the scope, including the ones just opened.
		return nil, markEnabled(statuses, StateNotConnected, "MCP session state was evicted during preparation")
	}
	return defs, statuses
}

// authorise runs the checks before any client exists, in the spec's
// order: capability, the secret.bind grant of every credential-looking
// Host variable, working directory, URL policy, then the gate. It
// returns the stdio working directory, or why the server is denied.
func (m *Manager) authorise(ctx context.Context, d Declaration, tc effect.TurnContext, gate ConnectGate, effective policy.Policy) (dir, why string) {
	if !tc.Grants.Can(d.ConnectCapability(), "") {
		return "", "capability denied: " + d.ConnectCapability()
	}
	if why := unboundCredential(d, tc.Grants); why != "" {
		return "", why
	}
	dir, why = m.precheck(d, tc)
	if why != "" {
		return "", why
	}
	if err := gate(ctx, connectRequest(d, tc, tc.Grants, effective)); err != nil {
		return "", errorText(err)
	}
	return dir, ""
}

// precheck checks the pure Host conditions of a connection: a stdio
// server's working directory inside the workspace, an HTTP server's URL
// against the URL policy's literal check (it runs before the connect
// approval, so it sends nothing, not even a DNS query; the transport
// resolves and judges the host when it connects).
func (m *Manager) precheck(d Declaration, tc effect.TurnContext) (dir, why string) {
	switch d.Transport {
	case TransportStdio:
		if err := m.opts.Sandbox.Check(); err != nil {
			return "", err.Error()
		}
		return resolveCwd(d.Cwd, tc.Workspace)
	case TransportStreamableHTTP:
		if dec := m.opts.URLPolicy.Check(d.URL); !dec.Allowed {
			return "", "URL blocked by Host policy: " + dec.Reason
		}
	}
	return "", ""
}

// workspaceRoot is the workspace with its links resolved ("" if it
// cannot be).
func workspaceRoot(ws string) string {
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return ""
	}
	return root
}

// resolveCwd resolves a declared working directory against the
// workspace: it must exist and stay inside the workspace once links are
// resolved. No declared cwd means the workspace itself.
func resolveCwd(cwd, workspace string) (string, string) {
	if workspace == "" {
		return "", "no workspace is bound to the turn"
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", "workspace is not accessible: " + demiurge.IOReason(err)
	}
	p := cmp.Or(cwd, ".")
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if !within(root, filepath.Clean(p)) && !within(workspace, filepath.Clean(p)) {
			return "", "path escapes workspace: " + cwd
		}
		return "", "cwd " + cwd + " is not accessible: " + demiurge.IOReason(err)
	}
	if !within(root, real) {
		return "", "path escapes workspace: " + cwd
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", "cwd " + cwd + " is not a directory"
	}
	return real, ""
}

func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// authorityKey binds a scope's connections to who may use them: the
// principal, the core revision and the capability
// snapshot. Each server's effective connect policy is bound to its own
// state, so a policy change reconnects the servers it changes only.
func authorityKey(tc effect.TurnContext) string {
	b, _ := json.Marshal(struct {
		Principal    string `json:"principal_id"`
		Revision     string `json:"core_revision"`
		Capabilities string `json:"capabilities"`
	}{tc.Scope.PrincipalID, tc.CoreRevision, tc.Grants.Fingerprint()})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// closeAll closes every connection of s and forgets its servers (an
// authority change). The caller holds s's token.
func (m *Manager) closeAll(s *scope) {
	for id, st := range s.servers {
		m.closeLater(st.conn)
		delete(s.servers, id)
	}
}

// buildDefinitions names the tools of the connected servers and fills the
// statuses of every declaration. Prefixes are handed out to every enabled
// server in declaration order, so one server's failure never renames
// another's tools.
func buildDefinitions(enabled []Declaration, servers map[string]*serverState, statuses []ServerStatus, all []Declaration) []effect.Definition {
	nm := newNamer()
	prefixes := nm.serverPrefixes(enabled)
	index := make(map[string]int, len(all))
	for i, d := range all {
		index[d.ID] = i
	}
	var defs []effect.Definition
	for _, d := range enabled {
		st := servers[d.ID]
		status := &statuses[index[d.ID]]
		if st == nil {
			continue
		}
		status.State, status.Error, status.RetryAfter = st.state, st.err, st.retryAfter
		if st.state != StateConnected {
			continue
		}
		status.Skipped = st.skipped
		for _, t := range st.tools {
			name := nm.tool(prefixes[d.ID], t.raw)
			defs = append(defs, toolDefinition(d, st.conn, t, name))
			status.ToolNames = append(status.ToolNames, name)
		}
		sort.Strings(status.ToolNames)
		status.Tools = len(status.ToolNames)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs
}

func markEnabled(statuses []ServerStatus, state, why string) []ServerStatus {
	for i := range statuses {
		if statuses[i].Enabled {
			statuses[i].State, statuses[i].Error = state, why
		}
	}
	return statuses
}

// errorText is an error's message for a status: a coded error's public
// message, otherwise its text (already redacted by the caller).
func errorText(err error) string {
	var e *demiurge.Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return err.Error()
}
