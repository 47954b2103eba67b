// Package delivery is the DeliveryRuntime: the outbox of delivery intents,
// their dispatch to live routes, and the in-memory router of those routes
// (spec host-runtime §3.3, §5.4, §5.5).
//
// # Usage
//
//	router := delivery.NewRouter()
//	token := router.Bind(sessionID, cliRoute)
//	defer router.Unbind(token)
//	rt := delivery.NewRuntime(db, router, delivery.Options{})
//	id, err := rt.Enqueue(ctx, delivery.Intent{SessionID: s, TurnID: t,
//		Text: "hello", Visible: true, HistoryPolicy: delivery.HistoryPersist})
//	status, err := rt.Dispatch(ctx, id) // or DispatchTurn(ctx, t)
//
// # Delivery semantics
//
// The outbox row is the single source of truth; the router is a table of live
// routes that is lost with the process. Enqueue writes the intent, its history
// message (when the policy writes history) and its durable work item in one
// store batch. Dispatch sends a queued delivery at most once:
//
//   - the work item is claimed first; a refused claim means someone else
//     has it, and the answer is "unknown" with nothing sent;
//   - the outbox moves to `sending` before the route is called, so a crash
//     mid-send leaves a `sending` row that restart reconciliation turns into
//     `unknown`; Dispatch never picks up a row that is not `queued`;
//   - the outcome is recorded as sent, unrouted (no live route:
//     last_error no_interactive_route) or failed (the route's coded message;
//     the history message, if any, is rewritten once with the failure text).
//
// Delivery failure never fails a turn: route failures are results, not
// errors.
//
// # Concurrency
//
// Router and Runtime are safe for concurrent use. The router never holds its
// lock while a route delivers. Dispatch blocks for as long as the route takes;
// the caller owns any goroutine it dispatches from. Once a send has started,
// its records are written under a context detached from the caller's
// cancellation (with its own timeout), so a cancelled caller cannot leave the
// outbox half-moved.
//
// # Failure modes
//
// Errors are *demiurge.Error: EINVALID for a bad intent, ENOTFOUND for a
// missing session or delivery, ECANCELED when the caller cancelled, and the
// store's codes otherwise. Uncoded route errors are recorded as
// "internal error": their text may carry a credential.
//
// This package imports only the root vocabulary: it reaches the
// RuntimeStore through its Store interface and the root's query windows
// (demiurge.DeliveryFilter, demiurge.WorkFields). The turn engine, slot
// runtime and composition root import it.
package delivery
