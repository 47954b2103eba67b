package starlark

import (
	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
)

// CapabilityObject builds ctx.capability for authored code at path:
// can(cap) reports can(cap); require(cap) fails with
// "capability denied: <cap> for <path>" when it is false. An empty
// capability is never granted. Both accept the original's keyword
// slot_path=, which changes nothing: the grants are always those of path
// (the pinned defaults and path's own), never another component's.
func CapabilityObject(path string, can func(capability string) bool) *Object {
	check := func(c string) bool { return c != "" && can(c) }
	return NewObject("ctx.capability", sl.StringDict{
		"can": sl.NewBuiltin("can", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var c string
			var slotPath sl.Value
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "capability", &c, "slot_path?", &slotPath); err != nil {
				return nil, err
			}
			return sl.Bool(check(c)), nil
		}),
		"require": sl.NewBuiltin("require", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var c string
			var slotPath sl.Value
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "capability", &c, "slot_path?", &slotPath); err != nil {
				return nil, err
			}
			if !check(c) {
				return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: %s for %s", c, path)
			}
			return sl.None, nil
		}),
	})
}
