package starlark

import (
	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	sl "go.starlark.net/starlark"
)

// predeclared returns the environment of authored modules beyond the Starlark
// universe: pure modules only. Nothing here may read a clock, a file, the
// network or the process environment.
func predeclared() sl.StringDict {
	return sl.StringDict{
		"json": json.Module,
		"math": math.Module,
	}
}
