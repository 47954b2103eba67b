// Package effect is the EffectRuntime: the per-turn catalog of tools and the
// one dispatcher every tool call passes through.
//
// # Catalog
//
// A Catalog is prepared once per turn, after admission, from the entries the
// composition root registers (builtin toolsets, authored tools, later MCP).
// It is immutable: provider definitions, tools_list and dispatch all read the
// same *Entry values, and dispatch never looks a name up again once a request
// is bound. Two sources defining one name fail preparation with an error
// naming both provenances; no source silently wins.
//
// # Dispatch
//
// Execute runs a bound request: capability check against the turn's pinned
// grants, approval policy (a "deny" policy or an unanswered "prompt" never lets
// the adapter run), then the adapter under a deadline and the caller's
// cancellation. Failures the model should see are results, never Go errors.
//
// # Concurrency
//
// A Catalog is safe for concurrent reads. Execute may be called from several
// goroutines; adapters document their own concurrency.
package effect
