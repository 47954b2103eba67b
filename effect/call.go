package effect

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Adapter prepares the calls of one entry. Prepare runs after the argument
// schema and the capability check and before approval: it decodes the
// arguments once (DecodeArgs) and makes the adapter's pure Host checks
// (workspace scope, command guard, URL policy). A non-nil outcome refuses
// the call and nothing has run; otherwise the Call carries everything the
// checks established, for the approval question and for running.
type Adapter interface {
	Prepare(ctx context.Context, inv Invocation) (Call, *Outcome)
}

// Call is one prepared call. ApprovalFacts describe what the operator
// approves; the zero value asks about "effect.call" of the entry. Run
// performs the effect once every Host check has passed. A result the model
// should see (a failing command) is an Outcome with IsError set; a
// returned error means the adapter itself broke and is reported as a
// failed effect.
type Call interface {
	ApprovalFacts() ApprovalFacts
	Run(ctx context.Context) (Outcome, error)
}

// Rechecker is implemented by calls whose prepared facts can change while
// the operator decides (a path's links, a working directory). Recheck
// runs after an approval that was not automatic and before Run; it checks
// again exactly what can have changed, and may update the call with the
// fresh answer. A non-nil outcome refuses the call; nothing has run. A
// call approved without asking anyone runs as prepared.
type Rechecker interface {
	Recheck(ctx context.Context) *Outcome
}

// PrepareFunc adapts a function to Adapter.
type PrepareFunc func(ctx context.Context, inv Invocation) (Call, *Outcome)

// Prepare calls f.
func (f PrepareFunc) Prepare(ctx context.Context, inv Invocation) (Call, *Outcome) {
	return f(ctx, inv)
}

// AdapterFunc is the adapter of an entry without checks of its own: its
// call asks the default approval question and runs f with the invocation.
type AdapterFunc func(ctx context.Context, inv Invocation) (Outcome, error)

// Prepare returns the call of f for inv.
func (f AdapterFunc) Prepare(_ context.Context, inv Invocation) (Call, *Outcome) {
	return RunFunc(func(ctx context.Context) (Outcome, error) { return f(ctx, inv) }), nil
}

// RunFunc is a prepared call that asks the default approval question.
type RunFunc func(ctx context.Context) (Outcome, error)

// ApprovalFacts returns the zero facts: the entry's default question.
func (RunFunc) ApprovalFacts() ApprovalFacts { return ApprovalFacts{} }

// Run calls f.
func (f RunFunc) Run(ctx context.Context) (Outcome, error) { return f(ctx) }

// DecodeArgs decodes a call's arguments into a T that starts as defaults:
// an argument that is absent or null keeps its default, so a pointer field
// tells a given argument from a missing one. The dispatcher has validated
// the arguments against the entry's schema, so for a T that follows the
// schema decoding fails only for a call that bypassed it; the outcome then
// refuses the call as invalid arguments.
func DecodeArgs[T any](inv Invocation, defaults T) (T, *Outcome) {
	out := defaults
	raw, err := json.Marshal(inv.Args)
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		name := "tool"
		if inv.Entry != nil {
			name = inv.Entry.Name
		}
		return defaults, &Outcome{IsError: true, Content: fmt.Sprintf("invalid arguments for %s: %s", name, argumentReason(err))}
	}
	return out, nil
}

// argumentReason names what did not decode without Go type names.
func argumentReason(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return fmt.Sprintf("at /%s: got %s", strings.ReplaceAll(te.Field, ".", "/"), te.Value)
	}
	return "arguments do not match the tool schema"
}
