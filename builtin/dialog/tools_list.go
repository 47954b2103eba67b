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

// runToolsList reads only the catalog the call was bound to, so its
// listing is made once per catalog.
func runToolsList(_ context.Context, inv effect.Invocation) (effect.Outcome, error) {
	l, err := effect.Derived(inv.Catalog, listingKey{}, makeListing)
	if err != nil {
		return effect.Outcome{}, err
	}
	return effect.Outcome{Content: l.content, ModelOutput: l.model, ExecutionStarted: true}, nil
}

// listingKey keys the listing among a catalog's derived values.
type listingKey struct{}

// listing is tools_list's result for one catalog: the full metadata, and
// the brief form the model sees.
type listing struct{ content, model string }

func makeListing(c *effect.Catalog) (listing, error) {
	entries := c.Entries()
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
		return listing{}, err
	}
	model, err := json.Marshal(map[string]any{"success": true, "count": len(entries), "tools": brief})
	if err != nil {
		return listing{}, err
	}
	return listing{content: string(content), model: string(model)}, nil
}
