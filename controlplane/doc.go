// Package controlplane is the RuntimeControlPlane and the RuntimeTaskWorker
// (spec host-runtime §1.7, §2.1, §2.2): the seam through which detached
// tasks are submitted, run, moved through their state machine, logged,
// cancelled, read, and announced to their owner session when they end. It
// writes events (and bounded log rows); the RuntimeStore projects them. It
// reaches the store through the narrow Store and WorkerStore interfaces
// and imports only the root vocabulary.
//
// # Control plane
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
//   - AppendLog and the worker's Handle.Log store log lines as task_logs
//     rows, not task.log events (a deliberate departure from the spec's
//     one event per line): the append keeps only the newest MaxLogLines
//     rows of the task in the same transaction, so a task's log occupies at
//     most MaxLogLines rows and an append costs the same whatever came
//     before. LogTail and Operator read the newest lines (TailLines /
//     TailChars for the operator); a line longer than MaxLogLineBytes is cut.
//   - Get hides tasks of other owners behind the ENOTFOUND of a missing
//     task ("task not found: <id>").
//
// # Worker
//
//	w := controlplane.NewWorker(cp, db, controlplane.WorkerOptions{HostID: host.ID()})
//	w.Handle(demiurge.TaskKindTerminalExec, runTerminal)
//	w.OnCompletion(startSyntheticTurn)
//	err := w.Start(ctx)
//	defer w.Close(ctx)
//	tk, err := w.Submit(ctx, spec, src) // running; w.Wait(ctx, tk.ID) for its end
//
// Submit writes task.submitted and task.started in one append (host_id =
// HostID) and runs the kind's Runner on a goroutine the worker owns. The
// runner's demiurge.TaskResult (or error, or panic) ends the task with exactly one
// terminal event: task.succeeded {summary, result_ref, metadata},
// task.failed {summary, error {message}, metadata} (an error's public
// message only: an uncoded error is "internal error"; a log line
// "error: <message>" is added) or task.cancelled {summary, error, metadata}.
// The result's metadata (exit code, exit reason) is in that terminal
// event. Handle.RecordProcess appends task.process_recorded {pid, marker};
// Handle.Block appends task.blocked.
//
// Memory holds only the live runs (cancel functions, log buffers); every
// read (Wait, Cancel's result, completions) comes from the store, so
// another process sees the same. Log lines are buffered per task and
// written every 100 ms or 64 lines and at the task's end; when writing
// falls behind the oldest unwritten lines are dropped first (at most
// MaxLogLines lines and 4 MiB wait per task).
//
// Task events of a busy worker are group-committed: one goroutine writes
// every append waiting at that moment in one transaction, each batch with
// its own guard in a savepoint (WorkerStore.AppendTaskBatches).
//
// # The queue
//
// Enqueue writes task.submitted alone (group-committed like the rest): the
// task waits, queued for one Host (TaskOrigin.HostID) or for any Host of
// the ledger. EnqueueMany queues many tasks of one origin in one write.
// Submit does the same, for this Host or, for a kind any Host may run
// (schedule.fire), for any Host, once the worker runs MaxActive tasks. The
// queue loop of every worker claims queued tasks of its kinds while it has
// room, up to 512 at a time (WorkerStore.ClaimQueuedTasks: a 5 s lease on
// the row, no event),
// starts them in one write (StartClaimedTasks: task.started, the claim
// cleared; a task cancelled meanwhile, or claimed by another Host after a
// lapse, is skipped) and runs them with the action they were submitted
// with. It wakes on the wake-ups of WorkerOptions.Subscribe (a task queued
// for any Host, or for this one) and when one of its runs ends, and reads
// the queue every QueuePoll (default 1 s) otherwise. What it claimed and
// will not start goes back at once (ReleaseTaskClaims); the claims of a
// Host that died go back when restart reconciliation finds it gone.
//
// # Cancellation
//
// Cancel is single-flight: concurrent Cancels, Wait, and a runner ending at
// the same moment all see one final task. For a task this worker runs, the
// runner's context is cancelled and the task ends cancelled with the
// runner's metadata once it returns, or after CancelGrace (default 5 s)
// without it; a requested cancel wins over a result that arrives after the
// request. A task nothing runs is cancelled in the store. A task of another
// Host process gets a task.cancel_requested {reason, requested_by} event;
// that Host's worker reads the open requests of its host at once when a
// wake-up announces one, and every CancelPoll (default 250 ms) otherwise,
// and cancels the same way, while the requester waits
// (bounded by ctx) for the terminal row. A requested task whose Host is
// gone ends lost when restart reconciliation runs.
//
// # Completions
//
// A task that ends with an owner session and a notify_policy other than
// "silent" (Notifies) gets one completion: task.completion_ready
// (aggregate task_completion, id task_event_…, payload task_id, kind,
// owner_session_id, owner_turn_id, source_tool, status, summary, log_tail,
// result_ref, metadata, origin_scope?) and a task.completion work item of
// the same id, in one append keyed "task:<task_id>:completion_ready",
// written after the terminal event. The completion loop claims due items
// (lease 30 s, extended while the handler runs), calls the OnCompletion
// function and acknowledges (work acknowledged + task.completion_acknowledged)
// on success; an error schedules a retry (1 s doubling to a minute, 20
// attempts). It wakes at once for a task of this worker and polls every
// 500 ms for the rest, which also emits completions that terminal tasks
// are missing (a crash between end and completion, a task lost by
// reconciliation, a cancel outside a worker); Start emits those first.
// Blocked tasks get no completion. A caller that takes the result itself
// (yield_until) uses WaitConsume: while it waits this worker neither writes
// nor delivers the task's completion, and afterwards the completion is
// claimed (owner host.task_worker.wait) and acknowledged without delivery;
// ConsumeCompletion does the last step alone.
//
// # Concurrency
//
// ControlPlane holds no mutable state and starts no goroutines; it is safe
// for concurrent use, also by several processes over one database.
// Transitions read the aggregate's last seq before the row and append with
// that seq as the Expected guard, retrying on a moved aggregate a bounded
// number of times: of two writers ending a task exactly one event is
// written. The worker's fast path guards with the seq it last wrote and
// falls back to the same loop. Submissions claiming a write scope also
// append a task.write_scope_claimed event on aggregate
// task_write_scope/<scope> guarded the same way.
//
// A Worker is safe for concurrent use. Its goroutines (runs, cancel
// watchdogs, the committer, the log flusher, the cancel poll, the
// completion loop and its handlers) are owned: Close closes admission
// (EUNAVAILABLE "task admission is closed"), cancels the active tasks
// (summary ShutdownReason), waits for them within ctx, delivers the
// completions due at that moment (a short-lived Host announces what it
// ran), then stops the loops. A runner that ignores its context outlives a Close whose ctx
// ended (ETIMEOUT); its task is already ended cancelled, and its late
// result is dropped.
//
// # Failure modes and limits
//
// Errors are demiurge.Error values from the store or from this package
// (EINVALID, ECONFLICT, ENOTFOUND, EUNAVAILABLE, ETIMEOUT). Log lines that
// cannot be written are dropped and logged; a terminal event that cannot be
// written leaves the task running until reconciliation after the Host is
// gone. Completions are at least once: a handler that succeeds but whose
// acknowledgement is lost runs again after the lease. The write-scope check
// reads at most demiurge.MaxTaskLimit tasks per active status.
package controlplane
