package delegate

import (
	"context"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/delegation"
	"github.com/demiurge/demiurge/effect"
)

// Delegator runs delegate_task: validation in the spec's order, then an
// agent.spawn task. *delegation.Service implements it.
type Delegator interface {
	Delegate(ctx context.Context, inv effect.Invocation) effect.Outcome
}

func DelegateTask(d Deps) effect.Definition {
	return effect.Definition{
		Name: "delegate_task",
		Description: "Start a child agent on a goal as a background task and return its task_id. " +
			"The child runs in its own session; its result comes back as a task completion (notify_policy return_to_parent) " +
			"or stays silent. Use yield_until or task_status to follow it.",
		Schema:         delegation.Schema(),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		ApprovalPolicy: effect.ApprovalAuto,
		// The Delegator checks the arguments in the spec's order, between
		// the checks that need the turn; delegation.ArgumentError answers
		// for arguments the schema refuses, with the same sentences.
		Adapter: delegateAdapter{effect.AdapterFunc(func(ctx context.Context, inv effect.Invocation) (effect.Outcome, error) {
			if d.Delegator == nil {
				return tool.Unavailable("delegate_task", "no task worker is configured"), nil
			}
			return d.Delegator.Delegate(ctx, inv), nil
		})},
	}
}

// delegateAdapter hands the call to the Delegator, which reads the
// arguments itself.
type delegateAdapter struct{ effect.AdapterFunc }

// ArgumentError is delegation's sentence for arguments the schema refused.
func (delegateAdapter) ArgumentError(args map[string]any, _ string) string {
	return delegation.ArgumentError(args)
}

// Deps is what delegate_task needs of the Host.
type Deps struct {
	// Delegator runs delegate_task. Without it the tool answers that no
	// task worker is configured.
	Delegator Delegator
}
