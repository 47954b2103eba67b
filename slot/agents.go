package slot

import (
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// agentsObject builds ctx.agents. Without a spawner, spawn fails with a
// clear error rather than doing nothing.
func agentsObject(a demiurge.AgentSpawner, s demiurge.SlotSpec) *starlark.Object {
	return starlark.NewObject("ctx.agents", sl.StringDict{
		"spawn": sl.NewBuiltin("spawn", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var coreID, rawInput string
			var context, inputSlots, outputSlots, tools sl.Value = sl.None, sl.None, sl.None, sl.String("all")
			useBootstrap := false
			if err := sl.UnpackArgs(b.Name(), args, kwargs,
				"core_id", &coreID, "raw_input", &rawInput, "context?", &context,
				"input_slots?", &inputSlots, "output_slots?", &outputSlots,
				"use_bootstrap?", &useBootstrap, "tools?", &tools); err != nil {
				return nil, err
			}
			if a == nil {
				return nil, fmt.Errorf("ctx.agents.spawn: child agents are not available in this Host")
			}
			req := map[string]any{"core_id": coreID, "raw_input": rawInput, "use_bootstrap": useBootstrap}
			for name, v := range map[string]sl.Value{"context": context, "input_slots": inputSlots, "output_slots": outputSlots, "tools": tools} {
				if v == sl.None {
					continue
				}
				g, err := starlark.FromStarlark(v)
				if err != nil {
					return nil, fmt.Errorf("ctx.agents.spawn: %s: %v", name, err)
				}
				req[name] = g
			}
			handle, err := a.Spawn(starlark.Context(th), s.RelPath, req)
			if err != nil {
				return nil, fmt.Errorf("ctx.agents.spawn: %w", err)
			}
			return starlark.ToStarlark(handle)
		}),
	})
}
