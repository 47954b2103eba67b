package starlark

import (
	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
)

// CapabilityObject builds ctx.capability for authored code at path:
// can(cap) reports can(cap); require(cap) fails with
// "capability denied: <cap> for <path>" when it is false. An empty
// capability is never granted.
func CapabilityObject(path string, can func(capability string) bool) *Object {
	check := func(c string) bool { return c != "" && can(c) }
	return NewObject("ctx.capability", sl.StringDict{
		"can": sl.NewBuiltin("can", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var c string
			if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &c); err != nil {
				return nil, err
			}
			return sl.Bool(check(c)), nil
		}),
		"require": sl.NewBuiltin("require", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var c string
			if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &c); err != nil {
				return nil, err
			}
			if !check(c) {
				return nil, demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: %s for %s", c, path)
			}
			return sl.None, nil
		}),
	})
}
