package slot

import (
	"context"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

// RunBootstrap runs the bootstrap phase: serial slots only, in order. Each
// slot sees ctx {session_id, core_id, core_revision, workspace, slot_id,
// slot_path, capability, bootstrap{add(text), workspace, session_id, core_id,
// core_revision}}; ctx.bootstrap.add collects non-blank fragments and the
// snapshot is the fragments of completed slots joined "\n\n" (possibly "").
//
// A soft failure is recorded (module.failed) and the phase continues; a hard
// failure returns an error (EINVALID for an authored defect, EINTERNAL for a
// Host failure) and no snapshot. A misconfigured spec list fails with EINVALID
// before any slot runs; a done ctx fails with ECANCELED or ETIMEOUT. The
// result carries the events recorded so far even with an error.
func (r *Runtime) RunBootstrap(ctx context.Context, specs []demiurge.SlotSpec, env demiurge.BootstrapEnv) (demiurge.BootstrapResult, error) {
	if err := validate(demiurge.PhaseBootstrap, specs); err != nil {
		return demiurge.BootstrapResult{}, err
	}
	var fragments []string // committed fragments, appended by the serial lane only
	events, _, err := r.runLanes(ctx, demiurge.PhaseBootstrap, specs, func(ctx context.Context, s demiurge.SlotSpec, _ bool) slotRun {
		return r.runSlot(ctx, demiurge.PhaseBootstrap, s, func() (invocation, error) {
			var staged []string
			add := sl.NewBuiltin("add", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
				var text string
				if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &text); err != nil {
					return nil, err
				}
				if strings.TrimSpace(text) != "" {
					staged = append(staged, text)
				}
				return sl.None, nil
			})
			ctxObj := starlark.NewObject("ctx", sl.StringDict{
				"session_id":    sl.String(env.SessionID),
				"core_id":       sl.String(env.CoreID),
				"core_revision": sl.String(env.CoreRevision),
				"workspace":     sl.String(env.Workspace),
				"slot_id":       sl.String(s.ID),
				"slot_path":     sl.String(s.RelPath),
				"capability":    capabilityObject(env.Caps, s),
				"bootstrap": starlark.NewObject("ctx.bootstrap", sl.StringDict{
					"add":           add,
					"workspace":     sl.String(env.Workspace),
					"session_id":    sl.String(env.SessionID),
					"core_id":       sl.String(env.CoreID),
					"core_revision": sl.String(env.CoreRevision),
				}),
			})
			return invocation{ctx: ctxObj, commit: func() { fragments = append(fragments, staged...) },
				core: env.CoreID, revision: env.CoreRevision, caps: env.Caps}, nil
		})
	})
	if err != nil {
		return demiurge.BootstrapResult{Events: events}, err
	}
	return demiurge.BootstrapResult{Snapshot: strings.Join(fragments, "\n\n"), Events: events}, nil
}
