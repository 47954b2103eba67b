package dialog

import (
	"context"
	"encoding/json"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
)

func ToolsList() effect.Definition {
	return effect.Definition{
		Name:              "tools_list",
		Description:       "List the tools available in this turn, with their source, risk and capability.",
		Schema:            tool.ObjectSchema(map[string]any{}),
		Source:            effect.SourceBuiltin,
		Risk:              "low",
		ApprovalPolicy:    effect.ApprovalAuto,
		ModelOutputPolicy: "current_turn",
		Adapter:           effect.AdapterFunc(runToolsList),
	}
}

// runToolsList reads only the catalog the call was bound to.
func runToolsList(_ context.Context, inv effect.Invocation) (effect.Outcome, error) {
	entries := inv.Catalog.Entries()
	full := make([]map[string]any, 0, len(entries))
	brief := make([]map[string]any, 0, len(entries))
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		full = append(full, e.ModelMetadata())
		brief = append(brief, map[string]any{"name": e.Name, "description": e.Description, "source": e.Source, "enabled": true})
		names = append(names, e.Name)
	}
	content, err := json.MarshalIndent(map[string]any{
		"success": true, "count": len(entries), "tools": full,
		"hint":        "Call a tool by its exact name; tools not listed here are not available in this turn.",
		"model_tools": names,
	}, "", "  ")
	if err != nil {
		return effect.Outcome{}, err
	}
	model, err := json.Marshal(map[string]any{"success": true, "count": len(entries), "tools": brief})
	if err != nil {
		return effect.Outcome{}, err
	}
	return effect.Outcome{Content: string(content), ModelOutput: string(model), ExecutionStarted: true}, nil
}
