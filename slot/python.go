package slot

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// networkCapability grants a module.py slot's worker the network.
const networkCapability = "network.fetch"

func isPython(s demiurge.SlotSpec) bool { return strings.HasSuffix(s.ModulePath, ".py") }

// callPython runs a module.py slot on the Python worker of its core
// revision. Its ctx is the one a Starlark slot gets: every method the
// module calls runs the same built-in, checked when it is called.
func (r *Runtime) callPython(ctx context.Context, s demiurge.SlotSpec, timeout time.Duration, build func() (invocation, error)) (string, invocation, error) {
	if r.opts.Python == nil {
		return "", invocation{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "%s: module.py slots need the Host's Python worker, which this Host does not run", modulePath(s))
	}
	inv, err := build()
	if err != nil {
		return "", inv, err
	}
	network := inv.caps != nil && inv.caps.Can(networkCapability, s.RelPath)
	ret, err := r.opts.Python.CallForeign(ctx, starlark.ForeignCall{
		WorkerKey:  WorkerKey(inv.core, inv.revision, network),
		Core:       inv.core,
		CoreDir:    s.CoreDir,
		Kind:       starlark.ForeignSlot,
		ModulePath: s.ModulePath,
		Function:   function(s),
		Component:  s.RelPath,
		Ctx:        inv.ctx,
		Timeout:    timeout,
		Network:    network,
	})
	return ret.ReturnType, inv, err
}

// WorkerKey names the Python worker of a core revision; a worker granted
// the network is a separate one.
func WorkerKey(core, revision string, network bool) string {
	key := core + "@" + revision
	if network {
		key += "+net"
	}
	return key
}
