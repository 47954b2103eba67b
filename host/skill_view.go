package host

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// ViewSkill runs the core's skill_view tool for the operator, outside any
// turn (the terminal UI's /skill): the skill's content, or one of its
// linked files when filePath is not "". It goes through the core's catalog
// and the effect runtime like a turn's call, so a core without the tool,
// or one that denies it, gives that tool result; no question is asked (the
// tool needs no approval, and a call that would ask is denied).
func (h *Host) ViewSkill(ctx context.Context, coreID, name, filePath string) (demiurge.EffectResult, error) {
	cat, snap, err := h.Catalog(ctx, coreID)
	if err != nil {
		return demiurge.EffectResult{}, err
	}
	args := map[string]any{"name": name}
	if filePath != "" {
		args["file_path"] = filePath
	}
	req, ok := cat.Bind(demiurge.ToolCall{ID: demiurge.NewID("operator_call"), Name: "skill_view", Arguments: args}, "operator")
	if !ok {
		return effect.NotFound(cat, "skill_view"), nil
	}
	tc := effect.TurnContext{
		CoreID: snap.Core.ID, CoreRevision: snap.Revision, Workspace: h.home.WorkspaceDir(),
		Scope:  demiurge.OperatorScope(""),
		Grants: policy.NewGrants(snap.Core.CapabilitySources().Defaults, nil),
	}
	return effect.NewRuntime(effect.Options{}).Execute(ctx, cat, req, tc), nil
}
