// Package delivery is the DeliveryRuntime: the outbox of delivery intents,
// their dispatch to live routes, the retry loop, and the in-memory router
// of those routes (spec host-runtime §3.3, §5.4, §5.5).
//
// # Usage
//
//	router := delivery.NewRouter()
//	token := router.Bind(sessionID, cliRoute)
//	defer router.Unbind(token)
//	rt := delivery.NewRuntime(db, router, delivery.Options{HostID: host.ID()})
//	go rt.Run(loopCtx)                  // retries and orphans; cancel loopCtx to stop
//	id, err := rt.Enqueue(ctx, demiurge.DeliveryIntent{SessionID: s, TurnID: t,
//		Text: "hello", Visible: true, HistoryPolicy: demiurge.HistoryPersist})
//	status, err := rt.Dispatch(ctx, id) // or DispatchTurn(ctx, t)
//	...
//	cancel(); <-runDone; rt.Wait(shutdownCtx) // at shutdown
//
// # Delivery semantics
//
// The outbox row is the single source of truth; the router is a table of live
// routes that is lost with the process. Outbox statuses:
//
//	queued → sending → sent | failed | unknown | unrouted
//	            └────→ queued (transient failure: retry after a backoff)
//
// Enqueue writes the intent, its history message (when the policy writes
// history) and its durable work item (delivery.send, work_id = delivery_id)
// in one store transaction. A delivery is sent at most once:
//
//   - One transaction claims the work item and moves it and the outbox row
//     to `sending` before the route is called. Only a queued row is
//     started, and only by one dispatcher (the store serializes the
//     claims). A refused start sends nothing and writes nothing.
//   - The route is called with a deadline (Options.SendTimeout). One
//     transaction then records the outcome: sent; unrouted (no live route,
//     last_error no_interactive_route; a history-only delivery never
//     reaches a route: not_visible); failed (the route's coded message);
//     unknown (the route did not answer in time: it had the outbound and
//     may have shown it, so it is never retried); or queued again for a
//     transient failure.
//   - A transient failure is a route error coded EUNAVAILABLE or ETIMEOUT
//     (see Transient): the route says it did not hand the outbound over.
//     The work item becomes retry_scheduled with next_attempt_at after an
//     exponential backoff with jitter (RetryBase·2^(n-1), at most
//     RetryMax, minus up to half); after MaxAttempts the delivery is
//     failed. Any other route error is permanent. A cancelled caller
//     leaves the delivery failed "delivery cancelled" (the spec's rule);
//     neither is ever re-sent.
//   - A failed delivery with a history message annotates that message:
//     metadata delivery_status, delivery_error and, when the intent gave
//     a different failure text, delivery_failure_text. The message text
//     is never rewritten.
//
// Delivery failure never fails a turn: route failures are results, not
// errors.
//
// # Retry loop and handoff
//
// Run claims due delivery.send work items (ClaimDueWork) and dispatches each
// through the session's most recently bound route. A fresh delivery is due
// only after Options.Handoff: until then it belongs to the caller that
// enqueued it, which dispatches it under its turn's route token. Run thus
// picks up retries whose backoff has passed, deliveries whose enqueuer
// crashed before dispatching them, and claims whose lease lapsed.
//
// # Crashes
//
// Routes are in-process and synchronous. A crash after the start
// transaction and before the outcome transaction — during the route call
// or just after it — leaves the outbox row and the work item in `sending`.
// Restart reconciliation (store Reconcile, from the next Host) turns them
// into `unknown`; nothing ever claims a `sending` item again, so such a
// delivery is never sent twice, at the price of never knowing whether it
// was shown. A crash before the start transaction leaves it queued, and Run
// sends it later. The claim lease is at least SendTimeout plus the time the
// outcome record may take, so a live send is never mistaken for an expired
// one; if reconciliation does end a send first, its record stands and the
// late outcome is dropped.
//
// # A running turn's deliveries
//
// Send is the path of a running turn: it calls the route at once and
// returns the intent, the start and the outcome as batches for the turn's
// next write, so a turn's deliveries cost it no write transaction of their
// own. The guarantee is the same, by another order: nothing names the
// delivery until the turn writes, so a crash before that write leaves no
// row that could be sent again (the turn is lost with it). Enqueue and
// Dispatch, for everything else, cost three write transactions: Enqueue
// one (message, outbox row and work item), Dispatch two (start, outcome).
//
// # Performance
//
// BenchmarkEnqueueDispatch measures Enqueue and Dispatch and reports
// writetx/op.
//
// # Concurrency
//
// Router and Runtime are safe for concurrent use. The router never holds its
// lock while a route delivers. Dispatch blocks for at most SendTimeout plus
// two store writes; the caller owns any goroutine it dispatches from. The
// route runs on a goroutine the Runtime owns, so a route that ignores
// cancellation cannot hold Dispatch; Wait waits for such calls. Outcome
// records are written under a context detached from the caller's
// cancellation (with its own timeout), so a cancelled caller cannot leave
// the outbox half-moved. Run is meant to run on one goroutine per Runtime;
// several loops, in one process or several, only compete for claims.
//
// # Failure modes
//
// Errors are *demiurge.Error: EINVALID for a bad intent, ENOTFOUND for a
// missing session or delivery, ECANCELED when the caller cancelled, and the
// store's codes otherwise. Uncoded route errors and route panics are
// recorded as "internal error": their text may carry a credential. If the
// outcome record itself fails, the row stays `sending` until reconciliation
// makes it unknown.
//
// This package imports only the root vocabulary: it reaches the
// RuntimeStore through its Store interface and the root's query windows
// (demiurge.DeliveryFilter). The turn engine, slot runtime and composition
// root import it.
package delivery
