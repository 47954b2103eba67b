package mcp

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// ServerStatus is the state of one declared server, for the turn's
// diagnostics (the Host emits mcp.server_denied / mcp.server_failed events
// from them), `demiurge mcp list|check` and status pages. No field holds
// an argument, environment or header value.
type ServerStatus struct {
	Server    string `json:"server"`
	Path      string `json:"path"`
	Transport string `json:"transport"`
	Enabled   bool   `json:"enabled"`
	// State is StateConnected, StateFailed, StateDenied, StateDisabled or
	// StateNotConnected.
	State string `json:"state"`
	// Tools counts the tools offered from the server; ToolNames are their
	// catalog names (server-prefixed), sorted.
	Tools     int      `json:"tools"`
	ToolNames []string `json:"tool_names,omitempty"`
	// Skipped names listed tools left out because they could not be
	// offered (an input schema that does not compile), with the reason.
	Skipped []string `json:"skipped,omitempty"`
	// Error is the redacted failure or denial reason.
	Error string `json:"error,omitempty"`
	// RetryAfter is when a failed server is tried again.
	RetryAfter time.Time `json:"retry_after,omitzero"`
	// ConnectCapability is mcp.connect:<id>, named in denial events.
	ConnectCapability string `json:"connect_capability"`
	// HostVariables name the Host variables the declaration's env and
	// header values reference, where each goes and, for a credential,
	// whether the core grants its export (never a value).
	HostVariables []HostVariable `json:"host_variables,omitempty"`
}

// baseStatus is d's status before any connection, its Host variables
// judged under grants.
func baseStatus(d Declaration, grants policy.Grants) ServerStatus {
	st := ServerStatus{
		Server: d.ID, Path: d.RelPath, Transport: d.Transport, Enabled: d.Enabled,
		State: StateNotConnected, ConnectCapability: d.ConnectCapability(),
		HostVariables: d.HostVariables(grants),
	}
	if !d.Enabled {
		st.State = StateDisabled
	}
	return st
}

// CheckOptions configure Check.
type CheckOptions struct {
	// Workspace is where stdio servers run (a declared cwd must resolve
	// inside it).
	Workspace string
	// Gate decides each connection; nil refuses every one. The CLI passes
	// AllowOperator: running the check is the operator's approval.
	Gate ConnectGate
	// CoreApproval and GlobalApproval tighten the connect policy as in a
	// turn.
	CoreApproval, GlobalApproval policy.ApprovalConfig
	// Grants are the core's capability grants; only the exact
	// secret.bind:<NAME> grants count (a credential-looking Host variable
	// is exported only under one). The zero value grants none.
	Grants policy.Grants
}

// Check connects to every enabled server of decls, lists its tools and
// disconnects, without touching any session's state: the operator's
// `demiurge mcp check`. Servers are checked concurrently, at most
// MaxConcurrentConnects at a time, each bounded by its connect timeout;
// the secret.bind grants of credential-looking Host variables (from
// opts.Grants), the working directory and the URL policy are checked
// first, then the gate. The connect capability is not consulted: no turn
// is involved, running the check is the operator's choice. The statuses
// come in declaration order. Every connection that succeeded is closed
// (stdio process trees reaped) before Check returns; servers that failed
// are ended in the background, and Close waits for them.
func (m *Manager) Check(ctx context.Context, decls []Declaration, opts CheckOptions) []ServerStatus {
	out := make([]ServerStatus, len(decls))
	for i, d := range decls {
		out[i] = baseStatus(d, opts.Grants)
	}
	if !m.begin() {
		return markEnabled(out, StateNotConnected, errManagerClosed.Message)
	}
	defer m.end()
	tc := effect.TurnContext{Workspace: opts.Workspace}
	var jobs []discovery
	var idx []int
	var root string // the workspace, links resolved once, for the first new connection
	for i, d := range decls {
		if !d.Enabled {
			continue
		}
		why := unboundCredential(d, opts.Grants)
		var dir string
		if why == "" {
			dir, why = m.precheck(d, tc)
		}
		if why == "" {
			if opts.Gate == nil {
				why = "no connect gate configured"
			} else if err := opts.Gate(ctx, connectRequest(d, tc, opts.Grants, connectPolicy(d, opts.CoreApproval, opts.GlobalApproval))); err != nil {
				why = errorText(err)
			}
		}
		if why != "" {
			out[i].State, out[i].Error = StateDenied, why
			continue
		}
		if root == "" {
			root = workspaceRoot(tc.Workspace)
		}
		jobs = append(jobs, discovery{decl: d, dir: dir, root: root})
		idx = append(idx, i)
	}
	results := m.discoverAll(ctx, jobs)
	nm := newNamer()
	prefixes := nm.serverPrefixes(decls)
	var wg sync.WaitGroup
	for k, r := range results {
		st := &out[idx[k]]
		switch {
		case r.conn != nil:
			st.State, st.Skipped = StateConnected, r.skipped
			for _, t := range r.tools {
				st.ToolNames = append(st.ToolNames, nm.tool(prefixes[r.decl.ID], t.raw))
			}
			slices.Sort(st.ToolNames)
			st.Tools = len(st.ToolNames)
			wg.Go(r.conn.close)
		case r.cancelled:
			st.State, st.Error = StateNotConnected, "check cancelled"
		default:
			st.State, st.Error = StateFailed, r.err
		}
	}
	wg.Wait()
	return out
}
