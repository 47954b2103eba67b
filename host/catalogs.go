package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
	"github.com/demiurge/demiurge/turn"
)

// catalogs prepares the per-turn effect catalog: the core's builtin
// toolsets, its authored tools, its tools.metadata overrides and the core
// and global approval configuration.
type catalogs struct {
	builtins builtin.Deps
	starlark *starlark.Runtime
	python   starlark.ForeignRunner // module.py tools
	global   policy.ApprovalConfig
	// mcp connects the core's MCP servers behind their connect gate; nil
	// (or a context without a turn) contributes no MCP tools.
	mcp       *mcp.Manager
	approvals *effect.ApprovalRuntime
	logger    *slog.Logger
	// decls keeps each core's parsed MCP declarations for the revision
	// they were read at, so a turn does not parse them again.
	decls *declCache
	// cache keeps each core's definitions and plain catalog per revision.
	cache *catalogCache
	// audit records the MCP servers a turn could not use.
	audit func(ctx context.Context, events []demiurge.Event, key string, expected *demiurge.Expected) ([]demiurge.Event, error)
}

func (c catalogs) Prepare(ctx context.Context, snap turn.Snapshot, tc effect.TurnContext) (*effect.Catalog, error) {
	m := snap.Core.Manifest
	var mcpDefs []effect.Definition
	if c.mcp != nil && tc.TurnID != "" {
		mcpDefs = c.mcpDefinitions(ctx, snap, tc)
	}
	plain := len(mcpDefs) == 0 && tc.ToolPolicy == nil
	hit, ok := c.cache.get(snap.Core.ID, snap.Revision)
	if ok && plain && hit.catalog != nil {
		return hit.catalog, nil
	}
	if !ok {
		hit = cachedCatalog{
			revision: snap.Revision,
			builtins: builtin.Definitions(m.Tools.Toolsets, c.builtins),
			authored: authored.Definitions(snap.Core, c.starlark, authored.Options{Python: c.python}),
		}
	}
	cat, err := effect.Prepare(effect.Sources{
		MCP:            mcpDefs,
		CoreID:         snap.Core.ID,
		Revision:       snap.Revision,
		Builtins:       hit.builtins,
		Authored:       hit.authored,
		Metadata:       overrides(m.Tools.Metadata),
		CoreApproval:   approvalConfig(m.Approval),
		GlobalApproval: c.global,
		ToolPolicy:     tc.ToolPolicy,
	})
	if err != nil {
		return nil, err
	}
	if plain {
		hit.catalog = cat
	}
	if !ok || plain {
		c.cache.put(snap.Core.ID, hit)
	}
	return cat, nil
}

// mcpDefinitions connects (or reuses) the core's MCP servers for this turn.
// A declaration that does not load, a denied connect or a failed server
// contributes no tools and never fails the turn; each is logged.
func (c catalogs) mcpDefinitions(ctx context.Context, snap turn.Snapshot, tc effect.TurnContext) []effect.Definition {
	decls, err := c.decls.load(snap)
	if err != nil {
		c.logger.Warn("mcp declarations", "core_id", snap.Core.ID, "err", err)
		return nil
	}
	defs, statuses := c.mcp.Definitions(ctx, mcp.Request{
		Declarations: decls, Turn: tc, Gate: mcp.ApprovalGate(c.approvals), ScopeID: tc.TaskID,
		CoreApproval: approvalConfig(snap.Core.Manifest.Approval), GlobalApproval: c.global,
	})
	var events []demiurge.Event
	for _, s := range statuses {
		p := demiurge.MCPServerUnavailable{
			Server: s.Server, CoreID: snap.Core.ID, CoreRevision: snap.Revision,
			SessionID: tc.SessionID, TurnID: tc.TurnID, State: s.State, Error: s.Error,
			Capability: s.ConnectCapability, Transport: s.Transport,
		}
		var payload demiurge.EventPayload
		switch s.State {
		case mcp.StateFailed:
			payload = demiurge.MCPServerFailedPayload(p)
		case mcp.StateDenied:
			payload = demiurge.MCPServerDeniedPayload(p)
		default:
			continue
		}
		c.logger.Info("mcp server unavailable this turn", "server", s.Server, "state", s.State, "err", s.Error)
		ev := demiurge.NewEvent(demiurge.AggMCPServer, snap.Core.ID+":"+s.Server, payload)
		ev.Actor = map[string]any{"actor": "host.mcp"}
		events = append(events, ev)
	}
	if len(events) > 0 && c.audit != nil {
		if _, err := c.audit(ctx, events, "", nil); err != nil {
			c.logger.Warn("record mcp server events", "err", err)
		}
	}
	return defs
}

// declCache holds the MCP declarations of each core at one revision. The
// declarations live in the core's tree, so a revision names their content;
// they are shared read-only.
type declCache struct {
	mu    sync.Mutex
	cores map[string]cachedDecls
}

type cachedDecls struct {
	revision string
	decls    []mcp.Declaration
}

func (d *declCache) load(snap turn.Snapshot) ([]mcp.Declaration, error) {
	d.mu.Lock()
	hit, ok := d.cores[snap.Core.ID]
	d.mu.Unlock()
	if ok && snap.Revision != "" && hit.revision == snap.Revision {
		return hit.decls, nil
	}
	decls, err := mcp.LoadCore(snap.Core)
	if err == nil && snap.Revision != "" {
		d.mu.Lock()
		d.cores[snap.Core.ID] = cachedDecls{revision: snap.Revision, decls: decls}
		d.mu.Unlock()
	}
	return decls, err
}

func approvalConfig(a core.ApprovalConfig) policy.ApprovalConfig {
	return policy.ApprovalConfig{Default: a.Default, Tools: a.Tools, Capabilities: a.Capabilities, Risks: a.Risks}
}

// overrides converts tools.metadata; an empty string means "not set".
func overrides(md map[string]core.ToolMetadata) map[string]policy.Override {
	out := make(map[string]policy.Override, len(md))
	set := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for name, m := range md {
		out[name] = policy.Override{
			Risk: set(m.Risk), Capability: set(m.Capability), ApprovalPolicy: set(m.ApprovalPolicy),
			ModelOutputPolicy: set(m.ModelOutputPolicy), DisplayPolicy: set(m.DisplayPolicy), Enabled: m.Enabled,
		}
	}
	return out
}

// builtinDeps is what the builtin tools need of this Host.
func (h *Host) builtinDeps() builtin.Deps {
	loader := h.cores
	return builtin.Deps{
		Home:     h.home.Dir,
		Sessions: h.sessions,
		CoreDir:  h.home.CoreDir,
		SkillsDir: func(coreID string) string {
			snap, err := loader.Load(context.Background(), coreID)
			if err != nil {
				return ""
			}
			return snap.Core.SkillsDir()
		},
		CoreLoader: func(dir string) error {
			_, err := core.Load(dir)
			return err
		},
		Processes:     h.processes,
		ArtifactLimit: h.config.Limits.artifactLimit(),
		PrivateHome: func(sessionID string) string {
			sum := sha256.Sum256([]byte(sessionID))
			return filepath.Join(h.home.PrivateDir(), "terminal-home", hex.EncodeToString(sum[:16]))
		},
	}
}
