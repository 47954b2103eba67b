// Package effect is the EffectRuntime: the per-turn catalog of tools and the
// one dispatcher every tool call passes through.
//
// # Catalog
//
// Prepare resolves a turn's catalog once, after admission, from the entries
// the composition root registers (builtin toolsets, authored tools, later
// MCP): tools.metadata overrides (tightening-only for builtins), the core and
// global approval configuration folded in (it can only make a policy
// stricter), disabled entries dropped, argument schemas compiled. The
// Catalog is immutable: provider definitions, tools_list and dispatch all
// read the same *Entry values, and dispatch never looks a name up again once
// a request is bound. Two sources defining one name fail preparation with an
// error naming both provenances; no source silently wins.
//
// # Dispatch
//
// Execute runs a bound request in a fixed order: binding, argument schema
// (an invalid call names the JSON path), capability against the turn's
// pinned grants, the adapter's Prepare (its arguments decoded once, its
// pure Host checks made, the result a prepared Call), approval of the
// call's facts (ApprovalRuntime), the call under a deadline and the
// caller's cancellation, then redaction into five views (model, operator,
// event, durable, debug). A denial, a timeout or an unanswered prompt
// never lets the call run. Failures the model should see are results,
// never Go errors; statuses are succeeded, denied, invalid, not_found,
// failed, timed_out and cancelled.
//
// A call is prepared once, and what can change while the operator decides
// is checked again when it runs: after an approval that was not automatic,
// a call that implements Rechecker checks again what it names (a path's
// links, a working directory) before Run. A call approved without asking
// anyone runs exactly as it was prepared.
//
// # Approvals
//
// ApprovalRuntime decides prompts: policy deny and auto are answered without
// asking; a live "always allow for this session" grant answers when its
// whole identity matches (principal, session, core revision, capability
// snapshot, effective policy, entry, rule key); otherwise the operator is
// asked once for all identical concurrent questions. Grants expire after 8 h
// and are dropped when the session is left, the principal revoked, the core
// promoted or rolled back, and at shutdown.
//
// # Concurrency
//
// A Catalog is safe for concurrent reads. Execute and ApprovalRuntime are
// safe for concurrent use; adapters document their own concurrency.
package effect
