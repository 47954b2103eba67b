// Package controlplane is the RuntimeControlPlane (spec host-runtime §1.7,
// §2.1): the seam through which tasks are submitted, moved through their
// state machine, logged and read. It writes only events; the RuntimeStore
// projects them into the tasks and task_logs tables. It reaches the store
// through the narrow Store interface and imports only the root vocabulary.
//
// # Contract
//
//   - SubmitTask accepts the kinds agent.spawn, terminal.exec, evolver.run
//     and schedule.fire (else EINVALID "unsupported task kind: <kind>") and
//     appends task.submitted (idempotency "task:<id>:submitted" unless
//     given; a repeated key returns the first task). A top-level task has
//     no parent. A non-empty write scope held by an active task (queued,
//     running, blocked_needs_user) is refused with ECONFLICT "background
//     task write_scope is already active: <scope>"; the scope is kept in
//     the task's source as write_scope.
//   - Transition is the pure state machine; MarkStarted, Succeed, Fail,
//     Cancel and Block each append one event guarded by the task
//     aggregate's last seq and return the new row. A refused move is
//     ECONFLICT; Cancel of a terminal task returns it unchanged.
//   - AppendLog writes one task.log event per line; LogTail and Operator
//     read at most MaxLogLines (and TailLines / TailChars) newest lines.
//   - Get hides tasks of other owners behind the ENOTFOUND of a missing
//     task ("task not found: <id>").
//
// # Concurrency
//
// A ControlPlane holds no mutable state and starts no goroutines; it is
// safe for concurrent use, also by several processes over one database.
// Transitions read the aggregate's last seq before the row and append with
// that seq as the Expected guard, retrying on a moved aggregate (a log
// line, another writer) a bounded number of times: of two writers ending a
// task exactly one event is written. Submissions claiming a write scope
// also append a task.write_scope_claimed event on aggregate
// task_write_scope/<scope> guarded the same way, so two concurrent
// submissions of one scope cannot both pass the check.
//
// # Failure modes and limits
//
// Errors are demiurge.Error values from the store or from this package
// (EINVALID, ECONFLICT, ENOTFOUND). Log retention is enforced on reads
// only: the store offers no way to delete task_logs rows in the append
// transaction, so persisted rows grow with the log. The write-scope check
// reads at most demiurge.MaxTaskLimit tasks per active status.
package controlplane
