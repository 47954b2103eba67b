// Package host is the composition root: it opens a runtime home, wires the
// store, sessions, turns, slots, effects, deliveries and providers together,
// and closes them in order. It is the only package besides internal/cli that
// sees every other package; nothing imports it but the CLI and end-to-end
// tests. Restart recovery follows spec host-runtime §1.9 and DESIGN §2.
//
// # Lifecycle
//
// Open initialises a missing home (directories 0700, files 0600), opens the
// store, takes a heartbeat lease for this process and reconciles work left by
// Host processes that are gone. Several Host processes may share one home.
//
// Every step of Open that opens something records how to close it on one
// stack; Close runs the stack in reverse, and so does an Open that fails
// halfway, so a failed Open leaves nothing open. Each step is bounded by its
// own time, whatever the caller's context says. The order, and why:
//
//  0. the session feed: every subscription's channel is closed before
//     anything it watches goes away;
//  1. the scheduler loop, so no occurrence is claimed that could no longer
//     run;
//  2. the task worker: admission closes, active tasks are cancelled and
//     drained, while the turns, processes and MCP servers they use still
//     work;
//  3. the turn execution: new turns are refused, running ones cancelled and
//     waited for, so each writes its terminal event to a store that is
//     still open;
//  4. the delivery and recovery loops, then the delivery runtime's route
//     calls: the turns that enqueued deliveries are done;
//  5. the MCP runtime: its stdio servers are stopped (stdin closed, grace,
//     tree terminated) through the process manager, which must still be
//     open;
//  6. the approval runtime: no turn is left to wait for an answer;
//  7. the process manager: whatever tree is still alive is terminated and
//     reaped;
//  8. the core repository's checkout watch (a serving Host's only),
//     recorded after the lease and needing nothing else to close. On
//     PostgreSQL the repository opens after the lease, on the ledger's
//     shared live revision (core_ledger.go); on SQLite it depends on
//     nothing of the store and opens on a goroutine of Open's beside the
//     store, the lease and reconciliation (open_repo.go), joined (and, when
//     Open fails first, closed) before Open returns;
//  9. the heartbeat lease, released only once nothing of this Host runs;
//  10. the store (for a process that exits right after, Options.ExitAfterClose,
//     without closing its SQLite connections: the exit releases them, and
//     closing them would write nothing);
//  11. the log file, so every step above can still log.
//
// # API
//
// The Host's subsystems are unexported: a front end (the CLI, a channel)
// runs turns with Run and reads and acts through methods (sessions, turns,
// tasks, schedules, MCP servers, evolution), the operator's reads in the
// operator scope.
//
// An interactive front end also gets live views (feed.go,
// approvals_attach.go, usage.go): Subscribe delivers the committed events
// of a session and of its background work (tasks, child agents, schedule
// runs of its core) on a channel, from the feed's own goroutine, bounded
// and dropping (counted) rather than waiting for a slow reader;
// AttachApprover puts the approval questions of the session's child agents
// to the front end's approver, an unanswered one (detached, timed out,
// cancelled) being a denial; SessionUsage and TurnUsage total the provider
// usage the turns recorded. Doctor and InitHome work on a home without opening a
// Host, for the repair and health commands that must work while the Host
// cannot open.
package host
