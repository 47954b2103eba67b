package tool

import (
	"context"

	"github.com/demiurge/demiurge/effect"
)

// Typed is the adapter of a builtin tool whose arguments decode into A:
// Prepare decodes them once (effect.DecodeArgs, defaults first) and hands
// them to prepare, which makes the tool's pure checks and returns the
// call. check, when set, is the tool's own sentence for arguments the
// schema refuses (effect.ArgumentMessenger); it must be pure.
type Typed[A any] struct {
	Defaults A
	Check    func(A) string
	Call     func(ctx context.Context, inv effect.Invocation, args A) (effect.Call, *effect.Outcome)
}

var _ effect.ArgumentMessenger = Typed[struct{}]{}

func (t Typed[A]) Prepare(ctx context.Context, inv effect.Invocation) (effect.Call, *effect.Outcome) {
	args, out := effect.DecodeArgs(inv, t.Defaults)
	if out != nil {
		return nil, out
	}
	return t.Call(ctx, inv, args)
}

// ArgumentError is the tool's sentence for arguments the schema refused;
// arguments that do not even decode keep the schema's message.
func (t Typed[A]) ArgumentError(args map[string]any, _ string) string {
	if t.Check == nil {
		return ""
	}
	a, out := effect.DecodeArgs(effect.Invocation{Args: args}, t.Defaults)
	if out != nil {
		return ""
	}
	return t.Check(a)
}

// Simple is a tool without pure checks or approval facts of its own: its
// call asks the entry's default question and runs run with the decoded
// arguments.
func Simple[A any](defaults A, check func(A) string, run func(ctx context.Context, inv effect.Invocation, args A) (effect.Outcome, error)) Typed[A] {
	return Typed[A]{Defaults: defaults, Check: check, Call: func(_ context.Context, inv effect.Invocation, args A) (effect.Call, *effect.Outcome) {
		return effect.RunFunc(func(ctx context.Context) (effect.Outcome, error) { return run(ctx, inv, args) }), nil
	}}
}

// Refuse returns out as the refusal of a call that never started.
func Refuse(out effect.Outcome) (effect.Call, *effect.Outcome) {
	out.IsError, out.ExecutionStarted = true, false
	return nil, &out
}
