package slot

import (
	"context"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// RunOutput runs the output phase with the lane shape of RunInput. Each slot
// sees ctx {turn, slot_id, slot_path, workspace, capability, history, output,
// result}; ctx.output has response_text, content (the same text), metadata,
// workspace, session_root and the send built-ins; ctx.result has value and
// set(v).
//
// Serial slots deliver with history policy persist by default and may set the
// result; parallel slots deliver transient by default, fail with "parallel
// output modules cannot write session history" when a send would write
// history, and with "parallel output modules cannot modify the current agent
// result" on ctx.result.set. Result is the committed result of the serial
// slots (writes of a failed slot are dropped).
//
// Failures are handled as in RunBootstrap; the result carries the events
// recorded so far even with an error.
func (r *Runtime) RunOutput(ctx context.Context, specs []demiurge.SlotSpec, env demiurge.OutputEnv) (demiurge.OutputResult, error) {
	if err := validate(demiurge.PhaseOutput, specs); err != nil {
		return demiurge.OutputResult{}, err
	}
	turn, err := turnObject(env.Turn)
	if err != nil {
		return demiurge.OutputResult{}, err
	}
	meta, err := metadataValue("output metadata", env.Metadata)
	if err != nil {
		return demiurge.OutputResult{}, err
	}
	meta.Freeze() // shared by parallel slots: freeze before they start

	state := &resultState{}
	events, intents, err := r.runLanes(ctx, demiurge.PhaseOutput, specs, func(ctx context.Context, s demiurge.SlotSpec, parallel bool) slotRun {
		return r.runSlot(ctx, demiurge.PhaseOutput, s, func() (invocation, error) {
			rule := historyRule{slotDefault: s.HistoryPolicy, phaseDefault: demiurge.HistoryPersist, allowWrite: true}
			if parallel {
				rule = historyRule{slotDefault: s.HistoryPolicy, phaseDefault: demiurge.HistoryTransient, allowWrite: false}
			}
			snd := &sender{slotID: s.ID, rule: rule, workspace: env.Workspace, sessionRoot: env.SessionRoot}
			res := &resultClient{state: state, writable: !parallel, workspace: env.Workspace, sessionRoot: env.SessionRoot}

			members := snd.members()
			members["response_text"] = sl.String(env.ResponseText)
			members["content"] = sl.String(env.ResponseText)
			members["metadata"] = meta
			members["workspace"] = sl.String(env.Workspace)
			members["session_root"] = sl.String(env.SessionRoot)
			ctxObj := starlark.NewObject("ctx", sl.StringDict{
				"turn":       turn,
				"slot_id":    sl.String(s.ID),
				"slot_path":  sl.String(s.RelPath),
				"workspace":  sl.String(env.Workspace),
				"capability": capabilityObject(env.Caps, s),
				"history":    historyObject(env.History),
				"agents":     agentsObject(env.Agents, s),
				"tools":      toolsObject(env.Tools, slotCan(env.Caps, s), s),
				"state":      stateObject(env.State, slotCan(env.Caps, s), s),
				"output":     starlark.NewObject("ctx.output", members),
				"result":     res.object(),
			})
			inv := invocation{ctx: ctxObj, sender: snd, core: env.Turn.CoreID, revision: env.Turn.CoreRevision, caps: env.Caps}
			if !parallel {
				inv.commit = res.commit
			}
			return inv, nil
		})
	})
	if err != nil {
		return demiurge.OutputResult{Events: events}, err
	}
	value, set := state.get()
	return demiurge.OutputResult{Intents: intents, Result: value, ResultSet: set, Events: events}, nil
}
