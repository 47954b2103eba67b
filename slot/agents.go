package slot

import (
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// Record types of ctx.agents answers (the original's names).
const (
	agentSpawnHandleType = "AgentSpawnHandle"
	agentRunResultType   = "AgentRunResult"
)

// agentsObject builds ctx.agents: spawn starts a child agent task and
// returns its handle; run runs a child turn to its end and returns its
// AgentRunResult. The spawner checks agents.spawn:<core> or
// agents.run:<core> against the slot's grants. Without a spawner both fail
// with a clear error rather than doing nothing.
func agentsObject(a demiurge.AgentSpawner, s demiurge.SlotSpec) *starlark.Object {
	return starlark.NewObject("ctx.agents", sl.StringDict{
		"spawn": sl.NewBuiltin("spawn", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			req, err := agentRequest("ctx.agents.spawn", b, args, kwargs)
			if err != nil {
				return nil, err
			}
			if a == nil {
				return nil, fmt.Errorf("ctx.agents.spawn: child agents are not available in this Host")
			}
			handle, err := a.Spawn(starlark.Context(th), s.RelPath, req)
			if err != nil {
				return nil, fmt.Errorf("ctx.agents.spawn: %w", err)
			}
			return recordValue(agentSpawnHandleType, handle, nil)
		}),
		"run": sl.NewBuiltin("run", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			req, err := agentRequest("ctx.agents.run", b, args, kwargs)
			if err != nil {
				return nil, err
			}
			if a == nil {
				return nil, fmt.Errorf("ctx.agents.run: child agents are not available in this Host")
			}
			res, err := a.Run(starlark.Context(th), s.RelPath, req)
			if err != nil {
				return nil, fmt.Errorf("ctx.agents.run: %w", err)
			}
			return recordValue(agentRunResultType, res, nil)
		}),
	})
}

// agentRequest unpacks (core_id, raw_input, context=None, input_slots=None,
// output_slots=None, use_bootstrap=False, tools="all") into the spawner's
// arguments; None values are left out.
func agentRequest(what string, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (map[string]any, error) {
	var coreID, rawInput string
	var context, inputSlots, outputSlots, tools sl.Value = sl.None, sl.None, sl.None, sl.String("all")
	useBootstrap := false
	if err := sl.UnpackArgs(b.Name(), args, kwargs,
		"core_id", &coreID, "raw_input", &rawInput, "context?", &context,
		"input_slots?", &inputSlots, "output_slots?", &outputSlots,
		"use_bootstrap?", &useBootstrap, "tools?", &tools); err != nil {
		return nil, err
	}
	req := map[string]any{"core_id": coreID, "raw_input": rawInput, "use_bootstrap": useBootstrap}
	for name, v := range map[string]sl.Value{"context": context, "input_slots": inputSlots, "output_slots": outputSlots, "tools": tools} {
		if v == sl.None {
			continue
		}
		g, err := starlark.FromStarlark(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", what, name, err)
		}
		req[name] = g
	}
	return req, nil
}
