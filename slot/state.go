package slot

import (
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// stateObject builds ctx.state {core, session} for the slot s.
func stateObject(st demiurge.StateStore, can func(string) bool, s demiurge.SlotSpec) *starlark.Object {
	return starlark.NewObject("ctx.state", sl.StringDict{
		"core":    stateScopeObject(st, can, s, demiurge.StateScopeCore),
		"session": stateScopeObject(st, can, s, demiurge.StateScopeSession),
	})
}

// stateScopeObject builds ctx.state.<scope>: get(target, default=None),
// set/merge/append(target, value) and snapshot(). Reads need
// state.<scope>.read:<target> or state.<scope>.read, writes
// state.<scope>.write:<target> or state.<scope>.write, snapshot the
// generic read grant; each is checked when called, before the target. A
// denial names the generic capability, as the original's require does.
func stateScopeObject(st demiurge.StateStore, can func(string) bool, s demiurge.SlotSpec, scope string) *starlark.Object {
	prefix := "state." + scope + "."
	check := func(kind, target string) error {
		generic := prefix + kind
		if target != "" && can(generic+":"+target) || can(generic) {
			return nil
		}
		return demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: %s for %s", generic, s.RelPath)
	}
	store := func(name string) error {
		if st == nil {
			return fmt.Errorf("ctx.state.%s.%s: state is not available in this Host", scope, name)
		}
		return nil
	}
	write := func(op string) *sl.Builtin {
		return sl.NewBuiltin(op, func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var target string
			var value sl.Value
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "target", &target, "value", &value); err != nil {
				return nil, err
			}
			if err := check("write", target); err != nil {
				return nil, err
			}
			if len(demiurge.StateSegments(target)) == 0 {
				return nil, demiurge.Errorf(demiurge.EINVALID, "state proposal target is required")
			}
			patch, err := starlark.FromStarlark(value)
			if err != nil {
				return nil, demiurge.Errorf(demiurge.EINVALID, "ctx.state.%s.%s: value: %v", scope, op, err)
			}
			if err := store(op); err != nil {
				return nil, err
			}
			v, err := st.Write(starlark.Context(th), scope, s.RelPath, target, op, patch)
			if err != nil {
				return nil, err
			}
			return starlark.ToStarlark(v)
		})
	}
	return starlark.NewObject("ctx.state."+scope, sl.StringDict{
		"get": sl.NewBuiltin("get", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var target string
			var def sl.Value = sl.None
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "target", &target, "default?", &def); err != nil {
				return nil, err
			}
			if err := check("read", target); err != nil {
				return nil, err
			}
			if err := store("get"); err != nil {
				return nil, err
			}
			doc, err := st.Document(starlark.Context(th), scope)
			if err != nil {
				return nil, err
			}
			v, ok := demiurge.StateGet(doc, target)
			if !ok {
				return def, nil
			}
			return starlark.ToStarlark(v)
		}),
		"set":    write(demiurge.StateSet),
		"merge":  write(demiurge.StateMerge),
		"append": write(demiurge.StateAppend),
		"snapshot": sl.NewBuiltin("snapshot", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if err := sl.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if err := check("read", ""); err != nil {
				return nil, err
			}
			if err := store("snapshot"); err != nil {
				return nil, err
			}
			doc, err := st.Document(starlark.Context(th), scope)
			if err != nil {
				return nil, err
			}
			return starlark.ToStarlark(doc)
		}),
	})
}
