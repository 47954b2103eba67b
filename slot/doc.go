// Package slot is the SlotRuntime: it runs the authored bootstrap, input and
// output slots of an Agent Core (module.star, def process(ctx)) on the
// starlark runtime and turns what they ask for into plain data: a bootstrap
// snapshot, prompt text and context contributions, delivery intents
// (demiurge.SlotIntent), an agent result, and diagnostic events
// (demiurge.SlotEvent). It performs no delivery and writes no
// history itself; the turn engine applies the results.
//
// # Usage
//
//	rt := slot.NewRuntime(starlark.NewRuntime(starlark.Options{}), slot.Options{})
//	boot, err := rt.RunBootstrap(ctx, bootstrapSpecs, demiurge.BootstrapEnv{...})
//	in, err := rt.RunInput(ctx, inputSpecs, demiurge.InputEnv{...})
//	out, err := rt.RunOutput(ctx, outputSpecs, demiurge.OutputEnv{...})
//
// The specs, environments and results are root nouns (demiurge.SlotSpec,
// demiurge.InputEnv, demiurge.InputResult, ...), so the turn engine runs
// the pipeline through an interface of its own without importing this
// package. Specs are the loader's slot definitions converted by the turn
// engine; this package does not import the core loader. Environments carry
// the turn facts and three small interfaces: demiurge.HistoryReader,
// demiurge.CapabilityChecker and demiurge.AgentSpawner.
//
// # Authored code
//
// A slot's ctx is a tree of immutable objects whose built-ins are the only
// way out of the sandbox: ctx.capability.can/require (against the pinned
// snapshot and the slot's slot.yaml grants, fail closed), ctx.history
// .recent_messages (through the HistoryReader), prompt writes, send_* (recorded
// as intents) and ctx.result. Authored code has no file, network, clock or
// environment access. Each invocation runs under the starlark runtime's step
// budget and a deadline of SlotSpec.Timeout (default 10 s).
//
// History policy of a delivery (spec host-runtime §5.4): an explicit
// history_policy wins, then write_history, then the slot's declared
// HistoryPolicy, then the phase default (input: transient; serial output:
// persist; parallel output: transient). SlotSpec.HistoryPolicy must be "" when
// slot.yaml does not declare one, or the phase default is never reached. A
// parallel output slot ignores a declared default that would write history.
//
// # Concurrency
//
// A Runtime is safe for concurrent use. Within one phase run, parallel slots
// run on goroutines the run starts and always waits for (a hard failure in the
// serial lane cancels them first); serial slots run on the calling goroutine.
// Shared ctx values are frozen before the goroutines start; the agent result
// is guarded by a mutex. The HistoryReader and CapabilityChecker are called from
// several goroutines at once.
//
// # Failure modes
//
// A slot error (Starlark error, step or allocation budget, deadline,
// unreadable module) records a module.failed event whose Error reads
// "<module path>:<line>: <msg>"; the slot's staged prompt fragments, result
// writes and intents are dropped.
// Under the soft policy the phase continues; under the hard policy it returns
// a *demiurge.Error (EINVALID for authored defects, EINTERNAL for Host
// failures) naming the phase, the slot and the position. When the caller's
// ctx ends, the phase returns ECANCELED or ETIMEOUT whatever the policy.
// Invalid specs fail with EINVALID before any slot runs. Results returned
// with an error still carry the events recorded so far.
//
// Events of a phase are grouped per slot: serial slots in order, then parallel
// slots in declaration order; intents follow the same order.
package slot
