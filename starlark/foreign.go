package starlark

import (
	"context"
	"time"
)

// Kinds of a ForeignCall.
const (
	ForeignSlot = "slot" // def process(ctx)
	ForeignTool = "tool" // def execute(ctx, args)
)

// ForeignCall is one call of authored code written in another language
// (module.py) that runs out of process and reaches the Host only through
// the built-ins of Ctx (see Describe and CallPath). The slot runtime and the
// authored tools build it exactly as they build the ctx of a Starlark call,
// so the two languages share every check.
type ForeignCall struct {
	// WorkerKey names the worker that runs the call: one per core and
	// revision (and network grant). A new key for the same Core retires
	// the old worker.
	WorkerKey string
	Core      string // core id
	CoreDir   string // absolute core directory: module sources are read beneath it
	Kind      string // ForeignSlot or ForeignTool
	// ModulePath is the absolute path of the entry module (a .py file).
	ModulePath string
	Function   string
	// Component is the core-relative component directory
	// ("agent/input/style_hint"): the capability subject and the search
	// path of relative imports, with agent/lib.
	Component string
	Ctx       *Object
	Args      map[string]any // ForeignTool: the call's arguments
	Timeout   time.Duration
	// Network grants the worker the network (the core is granted
	// network.fetch); otherwise it runs in a namespace without one.
	Network bool
}

// ForeignReturn is what a foreign call returned: the type name of a slot's
// non-None return value (ignored, but reported), or a tool's result fields
// (content, data, is_error, terminate, model_output, display_output).
type ForeignReturn struct {
	ReturnType string
	Tool       map[string]any
}

// ForeignRunner runs foreign calls. Errors are *demiurge.Error: EINVALID for
// an authored fault (an exception, reported "<file>:<line>: <Type>: <text>"),
// ETIMEOUT past the call's Timeout, EUNAVAILABLE when no worker can run
// (no interpreter, a crash), ECANCELED when ctx ends.
type ForeignRunner interface {
	CallForeign(ctx context.Context, call ForeignCall) (ForeignReturn, error)
}
