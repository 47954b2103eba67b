package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
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
	global   policy.ApprovalConfig
}

func (c catalogs) Prepare(_ context.Context, snap turn.Snapshot, _ effect.TurnContext) (*effect.Catalog, error) {
	m := snap.Core.Manifest
	return effect.Prepare(effect.Sources{
		CoreID:         snap.Core.ID,
		Revision:       snap.Revision,
		Builtins:       builtin.Definitions(m.Tools.Toolsets, c.builtins),
		Authored:       authored.Definitions(snap.Core, c.starlark, authored.Options{}),
		Metadata:       overrides(m.Tools.Metadata),
		CoreApproval:   approvalConfig(m.Approval),
		GlobalApproval: c.global,
	})
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
		Home:     h.Home.Dir,
		Sessions: h.Sessions,
		CoreDir:  h.Home.CoreDir,
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
		Processes: h.Processes,
		PrivateHome: func(sessionID string) string {
			sum := sha256.Sum256([]byte(sessionID))
			return filepath.Join(h.Home.RuntimeDir(), "terminal-home", hex.EncodeToString(sum[:16]))
		},
	}
}
