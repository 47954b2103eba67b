package authored

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/starlark"
)

// networkCapability grants a module.py tool's worker the network.
const networkCapability = "network.fetch"

// runPython runs a module.py tool on the Python worker of the turn's core
// revision, with the ctx a Starlark tool gets. An exception is a failed
// outcome naming the file and line; a worker fault (timeout, crash) is a
// failed outcome too, unless the caller's context ended.
func (c *call) runPython(ctx context.Context) (effect.Outcome, error) {
	a := c.a
	if a.opts.Python == nil {
		return failed(a.display + ": module.py tools need the Host's Python worker, which this Host does not run"), nil
	}
	if c.argsErr != nil {
		return effect.Outcome{}, demiurge.WrapError(demiurge.EINTERNAL, c.argsErr, "authored tool %s: arguments are not JSON-compatible", a.name)
	}
	args, _ := integralNumbers(c.raw).(map[string]any)
	res := &result{}
	network := c.turn.Grants.Can(networkCapability, a.relPath) || a.declared.Can(networkCapability, a.relPath)
	ret, err := a.opts.Python.CallForeign(ctx, starlark.ForeignCall{
		WorkerKey:  workerKey(c.turn.CoreID, c.turn.CoreRevision, network),
		Core:       c.turn.CoreID,
		CoreDir:    a.coreDir,
		Kind:       starlark.ForeignTool,
		ModulePath: a.modulePath,
		Function:   a.function,
		Component:  a.relPath,
		Ctx:        a.ctxValue(c.turn, res),
		Args:       args,
		Timeout:    a.opts.Timeout,
		Network:    network,
	})
	if err != nil {
		if ctx.Err() != nil {
			return effect.Outcome{}, err
		}
		return failed(demiurge.ErrorMessage(err)), nil
	}
	fields := ret.Tool
	if len(fields) > 0 {
		v, err := starlark.ToStarlark(fields)
		if err != nil {
			return failed(a.display + ": invalid result: " + err.Error()), nil
		}
		if err := res.applyReturn(v); err != nil {
			return failed(a.display + ": invalid result: " + err.Error()), nil
		}
	}
	return res.outcome(), nil
}

// workerKey is slot.WorkerKey: one worker per core revision, another for
// the network grant.
func workerKey(core, revision string, network bool) string {
	key := core + "@" + revision
	if network {
		key += "+net"
	}
	return key
}
