package authored

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
)

// adapter runs one authored tool. It is immutable after Definitions and safe
// for concurrent calls.
type adapter struct {
	name       string
	coreDir    string // absolute core directory; the module must resolve inside it
	relPath    string // core-relative tool directory: slot_path and capability subject
	modulePath string // absolute module path
	display    string // core-relative module path: the name in errors and the cache key
	function   string
	capability string        // the call's required capability; "" for none
	declared   policy.Grants // the tool's own capabilities list, at relPath
	gate       policy.Grants // core defaults and capabilities.slots[relPath]; no component grants
	rt         *starlark.Runtime
	python     bool // module.py: runs on opts.Python
	opts       Options
}

var _ effect.Adapter = (*adapter)(nil)

// Prepare converts the arguments to frozen Starlark values once. An
// authored tool has no pure Host checks: its capability is checked, and
// its module read and loaded, when the call runs (see the package doc for
// the outcomes), and it asks the default approval question.
func (a *adapter) Prepare(_ context.Context, inv effect.Invocation) (effect.Call, *effect.Outcome) {
	c := &call{a: a, turn: inv.Turn, raw: inv.Args}
	c.args, c.argsErr = starlark.ToStarlark(integralNumbers(inv.Args))
	if c.argsErr == nil {
		c.args.Freeze()
	}
	return c, nil
}

// call is one prepared call of an authored tool.
type call struct {
	a       *adapter
	turn    effect.TurnContext
	args    sl.Value
	argsErr error          // the arguments are not JSON-compatible
	raw     map[string]any // the arguments as the call gave them
}

func (c *call) ApprovalFacts() effect.ApprovalFacts { return effect.ApprovalFacts{} }

// Run checks the tool's capability, reads and loads the module and runs
// execute(ctx, args).
func (c *call) Run(ctx context.Context) (effect.Outcome, error) {
	a := c.a
	if a.capability != "" && !(c.turn.Grants.Can(a.capability, a.relPath) && a.gate.Can(a.capability, a.relPath)) {
		return effect.Outcome{
			IsError: true, Denial: "capability",
			Content: fmt.Sprintf("capability denied: %s for %s", a.capability, a.relPath),
		}, nil
	}
	if a.python {
		return c.runPython(ctx)
	}
	if a.rt == nil {
		return effect.Outcome{}, demiurge.Errorf(demiurge.EINTERNAL, "authored tool %s has no Starlark runtime", a.name)
	}

	src, problem, err := a.readModule()
	if err != nil {
		return effect.Outcome{}, err
	}
	if problem != "" {
		return failed(a.display + ": " + problem), nil
	}
	mod, err := a.rt.Load(a.display, src)
	if err != nil {
		return failed(demiurge.ErrorMessage(err)), nil
	}
	if c.argsErr != nil {
		return effect.Outcome{}, demiurge.WrapError(demiurge.EINTERNAL, c.argsErr, "authored tool %s: arguments are not JSON-compatible", a.name)
	}

	res := &result{}
	ret, err := mod.CallLimited(ctx, starlark.Limits{MaxSteps: a.opts.MaxSteps, Timeout: a.opts.Timeout},
		a.function, a.ctxValue(c.turn, res), c.args)
	if err != nil {
		if ctx.Err() != nil {
			// The caller's deadline or cancellation: the dispatcher types it.
			return effect.Outcome{}, err
		}
		return failed(demiurge.ErrorMessage(err)), nil
	}
	if err := res.applyReturn(ret); err != nil {
		return failed(a.display + ": invalid result: " + err.Error()), nil
	}
	return res.outcome(), nil
}

// failed is the outcome of authored code that started and did not finish.
func failed(msg string) effect.Outcome {
	return effect.Outcome{IsError: true, ExecutionStarted: true, Content: msg}
}

// readModule reads the module, refusing one that does not resolve to a
// regular file inside the core (the file may have changed since the core was
// loaded) or that is larger than Options.MaxSource. problem is an authoring
// fault for the model; err a Host failure.
func (a *adapter) readModule() (src []byte, problem string, err error) {
	resolved, err := filepath.EvalSymlinks(a.modulePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "module not found", nil
	}
	if err != nil {
		return nil, "", a.readErr(err)
	}
	root, err := filepath.EvalSymlinks(a.coreDir)
	if err != nil {
		return nil, "", a.readErr(err)
	}
	if rel, err := filepath.Rel(root, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "module resolves outside the core", nil
	}
	f, err := os.Open(resolved)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "module not found", nil
	}
	if err != nil {
		return nil, "", a.readErr(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, "", a.readErr(err)
	}
	if !info.Mode().IsRegular() {
		return nil, "module is not a regular file", nil
	}
	src, err = io.ReadAll(io.LimitReader(f, int64(a.opts.MaxSource)+1))
	if err != nil {
		return nil, "", a.readErr(err)
	}
	if len(src) > a.opts.MaxSource {
		return nil, fmt.Sprintf("module is larger than the limit of %d bytes", a.opts.MaxSource), nil
	}
	return src, "", nil
}

func (a *adapter) readErr(err error) error {
	return demiurge.WrapError(demiurge.EINTERNAL, err, "%s: cannot read module: %s", a.display, demiurge.IOReason(err))
}
