package starlark

import (
	"context"
	"sort"
	"strings"

	sl "go.starlark.net/starlark"
)

// Module is a loaded authored module: its frozen globals. It is immutable and
// safe for concurrent calls.
type Module struct {
	rt      *Runtime
	path    string
	globals sl.StringDict
}

// Path returns the path the module was loaded as.
func (m *Module) Path() string { return m.path }

// Has reports whether the module defines a callable named fn.
func (m *Module) Has(fn string) bool {
	_, ok := m.globals[fn].(sl.Callable)
	return ok
}

// Globals returns the sorted names of the module's globals.
func (m *Module) Globals() []string {
	names := make([]string, 0, len(m.globals))
	for n := range m.globals {
		if !strings.HasPrefix(n, "$") { // the rewrite's temporaries
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Call runs the module's function fn with args on a fresh thread, under the
// runtime's step budget and deadline. See CallLimited.
func (m *Module) Call(ctx context.Context, fn string, args ...sl.Value) (sl.Value, error) {
	return m.CallLimited(ctx, Limits{}, fn, args...)
}

// CallLimited runs fn like Call, with the step budget and deadline of lim
// (zero fields take the runtime's options). The thread is cancelled when ctx
// ends; built-ins reach ctx (with the deadline) through Context(thread).
//
// Errors (*demiurge.Error, cause *Error positioned at the innermost frame in
// the module): EINVALID when fn is missing or not callable, when the code
// raises, or when the step budget is exhausted; ETIMEOUT when the deadline
// passes; ECANCELED when ctx is cancelled; a coded error of a built-in keeps
// its code.
func (m *Module) CallLimited(ctx context.Context, lim Limits, fn string, args ...sl.Value) (sl.Value, error) {
	f, ok := m.globals[fn]
	if !ok {
		return nil, coded(&Error{Kind: KindRuntime, Path: m.path, Msg: "module does not define " + fn})
	}
	if _, ok := f.(sl.Callable); !ok {
		return nil, coded(&Error{Kind: KindRuntime, Path: m.path, Msg: fn + " is a " + f.Type() + ", not a function"})
	}
	return m.rt.exec(ctx, lim, m.path, func(th *sl.Thread) (sl.Value, error) {
		v, err := sl.Call(th, f, sl.Tuple(args), nil)
		if err == nil {
			// The Host renders or serialises what a call returns: the value
			// may share its parts ([s] * n), so its rendering is charged.
			err = chargeFor(th, func(limit int64) int64 { return renderSize(v, limit) })
		}
		return v, err
	})
}
