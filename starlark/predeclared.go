package starlark

import (
	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	sl "go.starlark.net/starlark"
)

// predeclared returns the environment of authored modules beyond the Starlark
// universe: pure modules only, and the allocation guards the rewrite calls.
// Nothing here may read a clock, a file, the network or the process
// environment.
func predeclared() sl.StringDict {
	env := sl.StringDict{
		"json": json.Module,
		"math": math.Module,
	}
	for name, g := range guards {
		env[name] = g
	}
	return env
}
