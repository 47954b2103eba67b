package builtin

import (
	"context"

	"github.com/demiurge/demiurge/effect"
)

// tool is the adapter of a builtin tool whose arguments decode into A:
// Prepare decodes them once (effect.DecodeArgs, defaults first) and hands
// them to prepare, which makes the tool's pure checks and returns the
// call. check, when set, is the tool's own sentence for arguments the
// schema refuses (effect.ArgumentMessenger); it must be pure.
type tool[A any] struct {
	defaults A
	check    func(A) string
	prepare  func(ctx context.Context, inv effect.Invocation, args A) (effect.Call, *effect.Outcome)
}

var _ effect.ArgumentMessenger = tool[struct{}]{}

func (t tool[A]) Prepare(ctx context.Context, inv effect.Invocation) (effect.Call, *effect.Outcome) {
	args, out := effect.DecodeArgs(inv, t.defaults)
	if out != nil {
		return nil, out
	}
	return t.prepare(ctx, inv, args)
}

// ArgumentError is the tool's sentence for arguments the schema refused;
// arguments that do not even decode keep the schema's message.
func (t tool[A]) ArgumentError(args map[string]any, _ string) string {
	if t.check == nil {
		return ""
	}
	a, out := effect.DecodeArgs(effect.Invocation{Args: args}, t.defaults)
	if out != nil {
		return ""
	}
	return t.check(a)
}

// runTool is a tool without pure checks or approval facts of its own: its
// call asks the entry's default question and runs run with the decoded
// arguments.
func runTool[A any](defaults A, check func(A) string, run func(ctx context.Context, inv effect.Invocation, args A) (effect.Outcome, error)) tool[A] {
	return tool[A]{defaults: defaults, check: check, prepare: func(_ context.Context, inv effect.Invocation, args A) (effect.Call, *effect.Outcome) {
		return effect.RunFunc(func(ctx context.Context) (effect.Outcome, error) { return run(ctx, inv, args) }), nil
	}}
}

// refuse returns out as the refusal of a call that never started.
func refuse(out effect.Outcome) (effect.Call, *effect.Outcome) {
	out.IsError, out.ExecutionStarted = true, false
	return nil, &out
}
