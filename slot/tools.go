package slot

import (
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// toolResultType is the type of what ctx.tools.call returns (the original's
// ToolResult): a record with content, data, is_error, terminate,
// model_output and display_output.
const toolResultType = "ToolResult"

// toolsObject builds ctx.tools for the slot s. call(name, arguments=None)
// needs tool.call:<name> for the slot (checked first, when called); the
// caller then runs it as the model would run it, registry capability and
// approval included. A refused or failed tool is a result with is_error,
// never an error of the slot.
func toolsObject(t demiurge.ToolCaller, can func(string) bool, s demiurge.SlotSpec) *starlark.Object {
	return starlark.NewObject("ctx.tools", sl.StringDict{
		"call": sl.NewBuiltin("call", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var name string
			var arguments sl.Value = sl.None
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "name", &name, "arguments?", &arguments); err != nil {
				return nil, err
			}
			capName := "tool.call:" + name
			if name == "" || !can(capName) {
				return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: %s for %s", capName, s.RelPath)
			}
			argMap := map[string]any{}
			if arguments != sl.None {
				if _, ok := arguments.(*sl.Dict); !ok {
					return nil, fmt.Errorf("ctx.tools.call: arguments must be a dict or None, got %s", arguments.Type())
				}
				v, err := starlark.FromStarlark(arguments)
				if err != nil {
					return nil, fmt.Errorf("ctx.tools.call: arguments: %v", err)
				}
				argMap = v.(map[string]any)
			}
			if t == nil {
				return nil, fmt.Errorf("ctx.tools.call: tools are not available in this Host")
			}
			res, err := t.CallTool(starlark.Context(th), s.RelPath, name, argMap)
			if err != nil {
				return nil, fmt.Errorf("ctx.tools.call %s: %w", name, err)
			}
			return recordValue(toolResultType, res, map[string]any{
				"content": "", "data": nil, "is_error": false, "terminate": false, "model_output": nil, "display_output": nil,
			})
		}),
	})
}

// recordValue renders a Host answer as an immutable record of type typ
// (fields by attribute or by key):
// fields of defaults first, then those of values. A value that is not
// JSON-compatible is a Host defect.
func recordValue(typ string, values, defaults map[string]any) (sl.Value, error) {
	fields := make(sl.StringDict, len(defaults)+len(values))
	for _, m := range []map[string]any{defaults, values} {
		for k, v := range m {
			sv, err := starlark.ToStarlark(v)
			if err != nil {
				return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "%s.%s is not JSON-compatible", typ, k)
			}
			fields[k] = sv
		}
	}
	return starlark.NewRecord(typ, fields), nil
}
