// Package authored turns the authored tools of an Agent Core
// (<slots.tools>/<name>/tool.yaml + module.star, def execute(ctx, args)) into
// effect.Definitions that run on the shared Starlark runtime.
//
// # Usage
//
//	defs := authored.Definitions(core, rt, authored.Options{})
//	cat, err := effect.NewCatalog(core.ID, revision, append(builtins, defs...))
//
// Definitions is cheap: it copies the loader's metadata (name, description,
// input schema, risk, capability, approval and output policies) and reads no
// file. The module is read (bounded by Options.MaxSource), compiled (through
// the runtime's cache, keyed by path and content hash) and run only inside
// Adapter.Invoke, which the dispatcher calls after its capability and
// approval checks. A module edited after the core was loaded is therefore
// seen by the next call; a module deleted or broken after the load fails
// that call, not the catalog.
//
// # The ctx of execute(ctx, args)
//
//	ctx.turn            session_id, turn_id, core_id, core_revision
//	ctx.slot_id         the tool name
//	ctx.slot_path       the core-relative tool directory ("agent/tools/echo")
//	ctx.workspace       the turn's workspace root
//	ctx.capability      can(cap) -> bool, require(cap) (fails the call with
//	                    "capability denied: <cap> for <slot_path>")
//	ctx.output          set(content=, data=, is_error=, terminate=, model_output=)
//
// A capability is granted to ctx.capability by the turn's pinned grants for
// the tool path (path grants, then defaults) or by the tool's own
// `capabilities:` list in tool.yaml. The tool's singular `capability` is a
// requirement of the call, checked before the module is read against the
// pinned grants for the tool path and the core's defaults and
// capabilities.slots entry: the tool's own list never satisfies it (spec
// tool-runtime §3.3), so a tool cannot grant itself the right to run.
//
// args is the call's argument dict, frozen. A JSON number holding an exact
// integer arrives as an int (JSON decoding in Go yields floats; the model's 3
// stays 3, not 3.0). Authored code has no ambient I/O
// (see package starlark); each call runs under Options.MaxSteps and
// Options.Timeout.
//
// # Results
//
// The result starts from what ctx.output.set staged; a non-None return value
// then overrides it: a string sets content; a dict sets the fields it names
// among content, data, is_error, terminate, model_output (None values leave a
// field as staged; other keys fail the call as an invalid result naming them);
// any other value sets content to str(value). An error result loses any
// "denial" or "approval" key of its data, so authored code cannot forge a
// denial, and every result that ran reports ExecutionStarted.
//
// # Failure modes
//
// Failures of authored code are failed Outcomes (IsError, ExecutionStarted),
// never Go errors: a missing or oversized module, a module that resolves
// outside the core, a syntax error, a missing entry function, a runtime error,
// an exhausted step budget, an exhausted allocation budget ("...: authored
// code exceeded its memory budget of 256 MiB", the runtime's
// Options.MemoryLimit, which the Host takes from limits.authored_memory_mb_per_call),
// the tool's own deadline and an invalid result.
// Their content names the core-relative module path and, where known, the
// line: "agent/tools/<name>/module.star:<line>: <msg>". A missing required
// capability is a denial (Denial "capability", ExecutionStarted false).
// Invoke returns a Go error only for Host failures (an unreadable module,
// arguments that are not JSON-compatible, no runtime) and when the caller's
// context ends, so the dispatcher reports timed_out or cancelled.
//
// # Concurrency
//
// Definitions may be called concurrently; its results are immutable and one
// Definition's adapter may be invoked from any number of goroutines at once.
// Each call builds its own ctx and runs on its own Starlark thread; compiled
// modules are frozen and shared through the runtime's cache. Schema aliases
// the core's (immutable) input schema: callers must not modify it.
package authored
