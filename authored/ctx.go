package authored

import (
	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/starlark"
	sl "go.starlark.net/starlark"
)

// ctxValue builds the ctx of one call. Everything but ctx.output is read-only
// facts; ctx.output writes to res, which only this call's thread touches.
func (a *adapter) ctxValue(tc effect.TurnContext, res *result) *starlark.Object {
	return starlark.NewObject("ctx", sl.StringDict{
		"turn": starlark.NewObject("ctx.turn", sl.StringDict{
			"session_id":    sl.String(tc.SessionID),
			"turn_id":       sl.String(tc.TurnID),
			"core_id":       sl.String(tc.CoreID),
			"core_revision": sl.String(tc.CoreRevision),
		}),
		"slot_id":    sl.String(a.name),
		"slot_path":  sl.String(a.relPath),
		"workspace":  sl.String(tc.Workspace),
		"capability": a.capabilityObject(tc),
		"output":     outputObject(res),
	})
}

// capabilityObject builds ctx.capability: a capability is granted by the
// turn's pinned grants for the tool path or by the tool's own tool.yaml list.
// With neither, every check fails closed.
func (a *adapter) capabilityObject(tc effect.TurnContext) *starlark.Object {
	return starlark.CapabilityObject(a.relPath, func(c string) bool {
		return tc.Grants.Can(c, a.relPath) || a.declared.Can(c, a.relPath)
	})
}

// outputObject builds ctx.output. set stages result fields; a later set or
// the return value overrides them.
func outputObject(res *result) *starlark.Object {
	return starlark.NewObject("ctx.output", sl.StringDict{
		"set": sl.NewBuiltin("set", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var content, data, isError, terminate, modelOutput, displayOutput sl.Value
			if err := sl.UnpackArgs(b.Name(), args, kwargs,
				"content?", &content, "data?", &data, "is_error?", &isError,
				"terminate?", &terminate, "model_output?", &modelOutput, "display_output?", &displayOutput); err != nil {
				return nil, err
			}
			fields := map[string]sl.Value{
				keyContent: content, keyData: data, keyIsError: isError,
				keyTerminate: terminate, keyModelOutput: modelOutput, keyDisplayOutput: displayOutput,
			}
			if err := res.apply(fields); err != nil {
				return nil, demiurge.WrapError(demiurge.EINVALID, err, "%s: %v", b.Name(), err)
			}
			return sl.None, nil
		}),
	})
}
