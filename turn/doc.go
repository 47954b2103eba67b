// Package turn is the TurnExecution and the TurnEngine: Execution.Run takes
// one Request from admission (principal scope, session lease, pinned core
// revision and capability snapshot) to exactly one terminal turn event, and
// the model loop in between runs provider steps and their tool calls.
//
// # Collaborators
//
// The engine meets the session runtime, the slot pipeline, the delivery
// outbox, the route table and the store through narrow interfaces it
// declares (deps.go) with root nouns only (demiurge.SessionRequest,
// MessageInput, TurnStart, SlotSpec and the phase environments and
// results, DeliveryIntent, Route), so it imports none of session, slot or
// delivery; the composition root passes the real runtimes. Its one
// engine import is effect: a turn runs its tool calls over the effect
// runtime's per-turn catalog and turn context.
//
// # Observation
//
// A caller may watch a turn live (observe.go, usage.go): Request.OnToolCall
// reports each tool call requested, waiting for approval, running and
// ended, with a one-line summary, its typed status, duration, a redacted
// excerpt of its output and the tool's display data (diffs, terminal exit
// code and tail); Request.OnStep reports each model step with the usage
// the provider reported. A step whose provider reported usage is recorded
// as model.step.completed, riding with the turn's next write. Nothing is
// built for a callback that is not set.
//
// # Concurrency
//
// An Execution is safe for concurrent use. Turns of one session run one at
// a time, in arrival order; turns of different sessions run at once.
// Cancel ends one running turn; Close refuses new turns, cancels the
// running ones and waits for every Run to return.
package turn
