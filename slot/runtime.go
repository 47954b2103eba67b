package slot

import (
	"context"
	"errors"
	"maps"
	"os"
	"sync"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// DefaultTimeout is the deadline of one slot invocation when SlotSpec.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// Options configures a Runtime.
type Options struct {
	// DefaultTimeout replaces SlotSpec.Timeout when that is 0 (default 10 s).
	DefaultTimeout time.Duration
	// Python runs module.py slots (the Host's Python worker); nil fails
	// them with EUNAVAILABLE.
	Python starlark.ForeignRunner
}

// Runtime runs slot pipelines. It holds no per-turn state and is safe for
// concurrent use by any number of turns.
type Runtime struct {
	rt   *starlark.Runtime
	opts Options
}

// NewRuntime returns a Runtime that runs authored modules on rt.
func NewRuntime(rt *starlark.Runtime, opts Options) *Runtime {
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	return &Runtime{rt: rt, opts: opts}
}

// invocation is what a phase builds for one slot call: the ctx value, the
// sender collecting its intents (nil in bootstrap), and commit, which applies
// the slot's staged writes once it has completed.
type invocation struct {
	ctx    *starlark.Object
	sender *sender
	commit func()
	// core and revision name the Python worker of a module.py slot; caps
	// decides whether it may use the network.
	core, revision string
	caps           demiurge.CapabilityChecker
}

// slotRun is the outcome of one slot.
type slotRun struct {
	events  []demiurge.SlotEvent
	intents []demiurge.SlotIntent
	err     error // the slot's failure; nil when it completed
}

// runSlot loads and calls one slot. A failed slot leaves no trace but its
// events: staged prompt fragments, result writes and intents are dropped.
func (r *Runtime) runSlot(ctx context.Context, phase string, s demiurge.SlotSpec, build func() (invocation, error)) slotRun {
	var run slotRun
	data := func(extra map[string]any) map[string]any {
		d := map[string]any{eventDataSlotPath: s.RelPath, eventDataLane: lane(s)}
		maps.Copy(d, extra)
		return d
	}
	run.events = append(run.events, demiurge.SlotEvent{Type: demiurge.SlotEventStarted, SlotID: s.ID, Phase: phase, Data: data(nil)})
	start := time.Now()

	retType, inv, err := r.call(ctx, s, build)
	elapsed := time.Since(start).Milliseconds()
	if err != nil {
		discarded := 0
		if inv.sender != nil {
			discarded = len(inv.sender.intents)
		}
		run.err = err
		run.events = append(run.events, demiurge.SlotEvent{
			Type: demiurge.SlotEventFailed, SlotID: s.ID, Phase: phase, Error: err.Error(),
			Data: data(map[string]any{eventDataElapsed: elapsed, eventDataPolicy: failurePolicy(s), eventDataDiscarded: discarded}),
		})
		return run
	}
	if inv.commit != nil {
		inv.commit()
	}
	if inv.sender != nil {
		run.intents = inv.sender.intents
	}
	if retType != "" {
		run.events = append(run.events, demiurge.SlotEvent{
			Type: demiurge.SlotEventReturnIgnored, SlotID: s.ID, Phase: phase,
			Data: data(map[string]any{eventDataReturnType: retType}),
		})
	}
	run.events = append(run.events, demiurge.SlotEvent{Type: demiurge.SlotEventCompleted, SlotID: s.ID, Phase: phase, Data: data(map[string]any{eventDataElapsed: elapsed})})
	return run
}

// call runs the slot and returns the type name of a non-None return value
// ("" for None).
func (r *Runtime) call(ctx context.Context, s demiurge.SlotSpec, build func() (invocation, error)) (string, invocation, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = r.opts.DefaultTimeout
	}
	if isPython(s) {
		return r.callPython(ctx, s, timeout, build)
	}
	mod, err := r.load(s)
	if err != nil {
		return "", invocation{}, err
	}
	inv, err := build()
	if err != nil {
		return "", inv, err
	}
	ret, err := mod.CallLimited(ctx, starlark.Limits{Timeout: timeout}, function(s), inv.ctx)
	if err != nil || ret == sl.None {
		return "", inv, err
	}
	return ret.Type(), inv, nil
}

// load reads and compiles the slot's module. The starlark runtime caches by
// path and content, so an unchanged module is compiled once.
func (r *Runtime) load(s demiurge.SlotSpec) (*starlark.Module, error) {
	return loadModule(r.rt, s)
}

// Precompile compiles the Starlark module of s into rt as a run of s
// would, so that the run finds it compiled (the Host does it for the core
// a `run` is about to use while it opens).
func Precompile(rt *starlark.Runtime, s demiurge.SlotSpec) error {
	_, err := loadModule(rt, s)
	return err
}

func loadModule(rt *starlark.Runtime, s demiurge.SlotSpec) (*starlark.Module, error) {
	src := s.Source
	if src == nil {
		b, err := os.ReadFile(s.ModulePath)
		if err != nil {
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "%s: cannot read module: %s", s.ModulePath, demiurge.IOReason(err))
		}
		src = b
	}
	return rt.Load(modulePath(s), src)
}

func failurePolicy(s demiurge.SlotSpec) string {
	if hard(s) {
		return demiurge.FailHard
	}
	return demiurge.FailSoft
}

// runLanes runs one phase: parallel slots start first, on goroutines owned
// here; serial slots run in order; the parallel slots are always awaited.
// A hard failure in the serial lane cancels the parallel slots. Events and
// intents are merged per slot, serial slots first, then parallel slots, each
// lane in declaration order. The error is the first hard failure or the end
// of ctx; events are returned with it.
func (r *Runtime) runLanes(ctx context.Context, phase string, specs []demiurge.SlotSpec, runOne func(ctx context.Context, s demiurge.SlotSpec, parallel bool) slotRun) ([]demiurge.SlotEvent, []demiurge.SlotIntent, error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var serial, parallel []demiurge.SlotSpec
	for _, s := range specs {
		if lane(s) == demiurge.LaneParallel {
			parallel = append(parallel, s)
		} else {
			serial = append(serial, s)
		}
	}

	par := make([]slotRun, len(parallel))
	var wg sync.WaitGroup
	for i, s := range parallel {
		wg.Go(func() { par[i] = runOne(lctx, s, true) })
	}

	var failure error
	ser := make([]slotRun, 0, len(serial))
	for _, s := range serial {
		run := runOne(lctx, s, false)
		ser = append(ser, run)
		if failure = phaseFailure(ctx, phase, s, run); failure != nil {
			break
		}
	}
	if failure != nil {
		cancel()
	}
	wg.Wait()
	for i := 0; failure == nil && i < len(parallel); i++ {
		failure = phaseFailure(ctx, phase, parallel[i], par[i])
	}
	if failure == nil && ctx.Err() != nil {
		failure = contextError(ctx, phase)
	}

	var events []demiurge.SlotEvent
	var intents []demiurge.SlotIntent
	for _, run := range append(ser, par...) {
		events = append(events, run.events...)
		intents = append(intents, run.intents...)
	}
	return events, intents, failure
}

// phaseFailure decides whether a slot's failure ends the phase: always when
// the caller's context ended (the turn is going away), otherwise only under
// the hard failure policy.
func phaseFailure(ctx context.Context, phase string, s demiurge.SlotSpec, run slotRun) error {
	if run.err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return contextError(ctx, phase)
	}
	if !hard(s) {
		return nil
	}
	// A failure of the Host underneath (module unreadable, store down) is
	// EINTERNAL; anything the authored code did (an error, a denied
	// capability, an exhausted budget or deadline) is EINVALID.
	code := demiurge.EINVALID
	if c := demiurge.ErrorCode(run.err); c == demiurge.EINTERNAL || c == demiurge.EUNAVAILABLE {
		code = demiurge.EINTERNAL
	}
	return demiurge.WrapError(code, run.err, "%s slot %s failed: %s", phase, s.ID, run.err.Error())
}

func contextError(ctx context.Context, phase string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "%s phase interrupted: deadline exceeded", phase)
	}
	return demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "%s phase interrupted: cancelled", phase)
}
