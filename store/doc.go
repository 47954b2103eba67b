// Package store is the RuntimeStore: the event log of the Demiurge host
// (in an SQLite file, or in a PostgreSQL database that several Hosts
// share) and the projections derived from it (spec host-runtime §1, with the
// session fields of §3.1 and the restart rules of DESIGN §2). The event
// log is the single source of truth; every projection row is written by the
// projection of an event in the same transaction as the event, except the
// coordination tables hosts and session_leases, which hold leases, not facts,
// and the task_logs rows of AppendTaskLogs, which hold a bounded log tail
// (see Task logs).
//
// # Usage
//
//	db, err := store.Open(ctx, filepath.Join(home, "runtime", "runtime.sqlite3"), store.Options{})
//	// or store.Open(ctx, "postgres://user@db.example:5432/demiurge", store.Options{})
//	defer db.Close()
//	host, err := db.StartHost(ctx, store.HostInfo{})   // heartbeat lease of this process
//	defer host.Close(ctx)
//	report, err := db.Reconcile(ctx, host.ID())        // mark work of gone Hosts lost/unknown
//	evs, err := db.Append(ctx, []demiurge.Event{...}, "idempotency-key", nil)
//	msgs, err := db.RecentMessages(ctx, sessionID, demiurge.MessageFilter{Limit: 50})
//
// Only the composition root, the tools layer and the edge import this
// package; engines reach it through the narrow interfaces they declare over
// the query types of the root package (demiurge.SessionFilter,
// demiurge.MessageFilter, demiurge.WorkFields, ...). It imports only the root
// vocabulary.
//
// # Engines
//
// Open takes an SQLite file path or a postgres:// (postgresql://) URL
// (IsDatabaseURL); Engine tells which. Every method has the same contract
// on both: the conformance suite (TestMain of this package, through
// internal/demiurgetest.RunEngines) runs the package's tests on SQLite and,
// when DEMIURGE_TEST_POSTGRES names a database, on PostgreSQL, each test in
// a schema of its own (the URL's search_path picks a schema, as it may in
// production). Tests of what only an SQLite file has (file modes, WAL,
// checkpoints, application_id, the migration chain, query plans) are
// SQLite-only and say so.
//
// The statements are written once, in SQLite's syntax restricted to what
// PostgreSQL also runs; the dialect (dialect.go) rewrites each text once
// for PostgreSQL: placeholders ?/?N → $n, INSERT OR IGNORE → ON CONFLICT DO
// NOTHING, INSERT OR REPLACE → an upsert on the table's key that sets every
// column (pgReplace), INDEXED BY hints dropped, and the few statements
// with SQLite's own functions (json_set, pragma_table_info, the event
// insert's seq) replaced whole (pgStatements). Values are TEXT times in
// demiurge.TimeLayout and INTEGER 0/1 flags on both; PostgreSQL compares
// TEXT in byte order (COLLATE "C"), as SQLite does.
//
// On PostgreSQL the schema (schema_postgres.sql, the same tables, columns
// and indexes as schema_snapshot.sql, checked by a test) is created in the
// current schema of an empty database; demiurge_schema holds the
// application_id and the version. A database with other tables, or of a
// newer version, is refused with ESCHEMA. An older one (from version 8,
// the first with PostgreSQL ledgers) is migrated at Open, under the write
// lock, by the PostgreSQL steps of the migrations since
// (migrations_postgres/NNNN_*.sql beside migrations/NNNN_*.sql, a test
// checks that none is missing; postgres_migrate.go); older than that is
// ESCHEMA. A URL that
// does not parse or a server that cannot be reached fails Open with
// ECONFIG, naming host, port and database, never the password (Path
// returns the same name). A connection lost later (a server restart, an
// administrator ending it) fails the statement in flight with EUNAVAILABLE,
// rolling back its transaction whole; the writer connection is replaced,
// so the next write runs on a new one, and each pooled read connection
// that was lost fails one read before database/sql replaces it. There is
// no retry of a write whose connection was lost: its commit may or may not
// have happened, and the caller's idempotency key decides.
//
// # Files and schema (SQLite)
//
// The database is a file in WAL mode; a missing parent directory is created
// 0700 and the db, -wal and -shm files are 0600. The schema is versioned by
// PRAGMA user_version and built by the embedded migrations/NNNN_*.sql files
// (a new database is created from schema_snapshot.sql, the schema they build
// together, which a test keeps equal to them); PRAGMA application_id is
// ApplicationID. Open refuses (ESCHEMA), without
// writing a byte, a file that is not SQLite, a database with another
// application_id (or tables but no application_id), and one whose version is
// newer than SchemaVersion().
//
// # Concurrency
//
// A DB is safe for concurrent use. Writes go through one writer connection
// (database/sql pool of one) in BEGIN IMMEDIATE transactions, so writers of
// one process queue in the pool and writers of several processes queue on
// SQLite's lock; SQLITE_BUSY is retried (busy_timeout per statement, then 6
// attempts of the whole transaction with backoff 25ms·2^n plus jitter) before
// it surfaces as EUNAVAILABLE. Reads use a separate pool of query_only
// connections (Options.Readers) and see every committed write. Each write
// transaction reads Options.Now once; all rows and events it writes carry
// that time (events may bring their own CreatedAt).
//
// On PostgreSQL, writes of one process are serialised in the same way (one
// writer connection, statements prepared on it), and writes of all Hosts
// of one ledger by a transaction-scoped advisory lock per ledger
// (sqlWriteLock: pg_advisory_xact_lock on the hash of the schema name), the
// transaction's first statement: SQLite's single writer, across machines.
// Every read-check-write of the store (idempotency keys, Expected guards,
// leases, claims, reconciliation) is therefore as correct as on SQLite
// without SERIALIZABLE retries, and seq values commit in seq order, so
// paging Events after a cursor never skips an event committed late.
// Serialization failures, deadlocks and lock timeouts (40001, 40P01,
// 55P03) are retried like SQLITE_BUSY. Reads run at READ COMMITTED on a
// pool of read-only connections (default_transaction_read_only) and see
// every committed write. The checkpointer, and the read pool that keeps
// the log between processes (keeper.go), are SQLite's.
//
// CopyLedger (copy.go, `demiurge store migrate`) moves an SQLite ledger
// into an empty PostgreSQL one: every row of every table, seqs, ids and
// rowids as they are, identity sequences advanced past them, in one
// PostgreSQL transaction committed only after every table's count
// verified; it refuses a target with any row (ECONFIG) and a source a live
// Host still uses (ECONFLICT).
//
// Several Host processes may share one file (or one PostgreSQL ledger). Each registers with StartHost
// and keeps a lease (HostTTL, refreshed every HostHeartbeatInterval by a
// goroutine the Host owns and Close stops). Reconcile only touches work of
// Hosts that are gone; AcquireSessionLease serializes turns of one session
// across processes.
//
// # Append
//
// Append writes a batch atomically: an idempotency key already
// stored returns the stored events unchanged; an Expected guard that does
// not match fails with ECONFLICT "runtime aggregate changed: expected X, got
// Y"; the payload is stored as encoded (it must be a JSON object, else
// EINVALID, as for a payload NewEvent could not encode) and the actor as
// sorted-key JSON; EventID, CreatedAt and Seq are filled in. Event types
// without a projection are stored as they are (the audit events of the
// table below). Derived session fields (preview, title, message_count,
// updated_at) are maintained incrementally, once per session per batch,
// never by rescanning the transcript. Events returns payloads as stored:
// a row that is not JSON fails to Decode.
//
// # Event payloads and projections
//
// Every event type has one payload struct in the root package
// (demiurge.EventPayloads); a projection receives its payload decoded into
// that struct and nothing else of it, so it cannot read a key the struct
// does not define. The table lists each type's keys, in the order its
// struct declares them, and what the projection does; doc_test.go checks
// it against the structs and the registered projections. "?" marks a key
// a payload may omit (an absent key reads as the zero value), "(…)"
// holds defaults and notes, "{…}" the keys of an object with a struct of
// its own. Times are RFC 3339 strings (writers use demiurge.TimeLayout);
// the projections store them in demiurge.TimeLayout. "COALESCE" means an
// absent key keeps the stored value. The payload is stored as the JSON
// NewEvent encoded (struct fields in declaration order, map keys sorted);
// rows of earlier builds, with sorted keys, decode the same.
//
//	session.created core_id, status? (active), channel?, title?, conversation_key?, workspace?,
//	                        provider?, model?, core_revision?, metadata?, bootstrap_context?,
//	                        bootstrap_context_initialized?, compaction_summary_id?,
//	                        compacted_until_message_id?, principal_scope?, target? (extra target
//	                        keys), owner? {kind, principal_id, channel, conversation_key,
//	                        origin_session_id, origin_turn_id}
//	                        → upsert sessions (target_json holds conversation_key through
//	                        target); binding (core_id, channel, conversation_key) inserted if
//	                        absent (first wins); session_owners INSERT OR IGNORE (owner
//	                        immutable; no owner → kind legacy_local, principal
//	                        "principal:legacy_local:<id>"); a non-empty
//	                        compacted_until_message_id must name a message of the session
//	                        (else EINVALID): its runtime_seq is kept in the target as
//	                        compacted_until_seq (Session.CompactedUntilSeq); "" clears the cutoff
//	session.updated|resumed core_id?, status?, channel?, title?, conversation_key?, workspace?,
//	                        provider?, model?, core_revision?, metadata?, bootstrap_context?,
//	                        bootstrap_context_initialized?, compaction_summary_id?,
//	                        compacted_until_message_id?, principal_scope?, target?, touch?
//	                        (default true for updated, false for resumed)
//	                        → COALESCE update, target keys merged, updated_at touched when
//	                        touch; binding inserted if absent
//	session.binding.rebound core_id?, channel, conversation_key?, workspace?, provider?, model?,
//	                        core_revision?, metadata?, bootstrap_context?,
//	                        bootstrap_context_initialized?, compaction_summary_id?,
//	                        compacted_until_message_id?, principal_scope?, target?
//	                        → channel and conversation_key required (else EINVALID); session
//	                        channel/target updated; binding re-pointed to this session
//	session.binding_conflict winner, loser, core_id, channel, conversation_key
//	                        → loser's session row deleted if it has no messages (with its
//	                        owner row and bindings)
//	message.persisted message_id?, session_id, turn_id?, role? (user), visible? (true), content?
//	                        {text, kind? (message), model_visible? (true), channel?, source?,
//	                        reply_to?, conversation_key?, metadata?} (earlier spellings read:
//	                        "visibility" "visible"|"hidden" for visible, a top-level "text" for
//	                        content without one)
//	                        → messages row (runtime_seq = event seq; re-persisting replaces it
//	                        without recounting); session: message_count+1, preview = newest
//	                        visible non-blank kind=message text (trimmed, newlines → spaces,
//	                        ≤120 runes), title = first such preview of a user message (≤80
//	                        runes) if no title yet, updated_at = event time
//	message.updated visible?, content? {text, kind?, model_visible?, channel?, source?, reply_to?,
//	                        conversation_key?, metadata?}
//	                        → content_json replaced (when given), visibility set (when given);
//	                        the session's message_edits counted; other derived fields unchanged
//	turn.started    session_id, status? (running), core_id?, core_revision?, host_id?, input_ref?
//	                        → turns row, status running; a repeat refreshes a running row
//	                        and leaves an ended one unchanged (never reopens a turn)
//	turn.completed|failed|cancelled|lost
//	                session_id?, status? (default: the suffix; e.g. needs_user via
//	                        turn.completed), host_id?, result_ref?, error? {code?, message}
//	                        → status, result_ref COALESCE, error_json COALESCE, completed_at;
//	                        only a running row changes, so the first terminal event applied is
//	                        final
//	tool.call.started turn_id, step_id, tool_name (earlier spelling read: "name"), status,
//	                        provider_call_id, args?, effect_source, effect_provenance,
//	                        core_revision
//	                        → tool_calls row, running
//	tool.call.completed|failed
//	                turn_id, step_id, tool_name, status (succeeded|failed, default by the
//	                        type), effect_status, effect_error {code, message,
//	                        execution_started, provenance}, result
//	                        → status, result COALESCE, completed_at
//	model.step.completed session_id, turn_id, step_id, model?, input_tokens, output_tokens,
//	                        cached_tokens?
//	                        → the turn's input_tokens, output_tokens and cached_tokens grow by
//	                        the step's and its model_steps by one
//	                        (aggregate model_step "<step id>"; written only for a step whose
//	                        provider reported usage)
//	delivery.queued owner_turn_id?, channel?, target?, status? (queued), idempotency_key?,
//	                        payload?, attempts (0), last_error?, host_id?
//	                        → outbox row
//	delivery.sending|sent|failed|retry_scheduled|unknown|unrouted
//	                status? (suffix), attempts? (COALESCE), last_error? (overwritten,
//	                        may become NULL), sent_at? (sent: default event time), host_id?
//	                        (COALESCE; the Host doing the send, used by Reconcile), message_id?,
//	                        failure_text?, next_attempt_at? (event only)
//	                        → delivery.failed with message_id merges delivery_status,
//	                        delivery_error and delivery_failure_text into that history
//	                        message's metadata without touching its text, and counts as one
//	                        message edit of the session. StartDeliverySend and
//	                        FinishDeliverySend move the work item and the outbox row
//	                        together, each in one transaction.
//	work.enqueued   kind, status? (queued), owner_session_id?, owner_turn_id?, parent_work_id?,
//	                        next_attempt_at?, external_ref?, attempts?, payload?
//	                        → runtime_work_items row
//	work.claimed|running|sending|heartbeat|succeeded|failed|cancelled|unknown|acknowledged|corrupt|recovered
//	                status? (claimed, running, sending, unchanged, succeeded, failed,
//	                        cancelled, unknown, acknowledged, corrupt, retry_scheduled),
//	                        claim_id?, owner_id?, claimed_at?, lease_expires_at?, attempts?,
//	                        next_attempt_at? (overwritten), last_error?, external_ref?,
//	                        clear_claim? (drops claim, owner, claimed_at, lease)
//	                        → COALESCE update; completed_at set on a terminal status
//	task.submitted  kind, status? (queued), root_task_id? (own id), parent_task_id?,
//	                        owner_session_id?, owner_turn_id?, core_id?, host_id?, source?
//	                        {actor, session_id, turn_id, core_id, task_id, metadata,
//	                        write_scope?}, notify_policy?, result_ref?, error? {code?, message},
//	                        action (kept in the event)
//	                        → tasks row (INSERT OR REPLACE)
//	task.started|succeeded|failed|cancelled|lost|blocked
//	                status? (started → running, blocked → blocked_needs_user, else the
//	                        suffix), summary? (event only), result_ref?, error? {code?,
//	                        message}, host_id?, metadata? (event only)
//	                        → status, started_at (started), completed_at (terminal ones),
//	                        result_ref/error/host_id COALESCE, heartbeat_at = event time
//	task.log        stream? (stdout), text
//	                        → task_logs row, numbered and trimmed like AppendTaskLogs with
//	                        DefaultTaskLogLines (the event itself stays)
//	task.cancel_requested reason?, requested_by?
//	                        → tasks.cancel_requested_at/cancel_reason, first request kept;
//	                        status unchanged
//	task.process_recorded pid, marker, host_id?
//	                        → tasks.process_pid/process_marker (newest)
//	task.completion_ready task_id, kind, owner_session_id, owner_turn_id, source_tool, status,
//	                        summary, log_tail, result_ref, metadata, origin_scope? (aggregate
//	                        task_completion "<work id>"; the work item's payload too)
//	                        → tasks.completion_work_id = the aggregate id, if unset
//	task.completion_acknowledged task_id, claim_id, work_id
//	                        → event only
//	task.write_scope_claimed task_id (aggregate task_write_scope "<scope>")
//	                        → event only (its guard serialises submissions of one scope)
//	artifact.stored owner_turn_id?, kind, uri, metadata?
//	                        → artifacts row
//	scheduler.scheduled|claimed
//	                core_id, schedule_id, due_at, claim_status? (suffix), task_id?,
//	                        work_id?, idempotency_key?, claim_id?, lease_expires_at?, skipped?,
//	                        manual?, reason?, error?, schedule_state {head_due?, head_sig?,
//	                        last_due?, last_run_id?, last_status?, last_error?, last_skipped?,
//	                        last_manual?, last_finished?}
//	                        → scheduler_instances row (INSERT OR REPLACE)
//	scheduler.completed|error
//	                core_id, schedule_id, due_at, claim_status? (suffix), task_id?,
//	                        work_id?, idempotency_key?, claim_id?, lease_expires_at?, skipped?,
//	                        manual?, reason?, error?, schedule_state {head_due?, head_sig?,
//	                        last_due?, last_run_id?, last_status?, last_error?, last_skipped?,
//	                        last_manual?, last_finished?}
//	                        → claim_status of the (core_id, schedule_id, due_at) row
//	principal_scope.owner_lookup_denied reason, lookup_id, principal_id, authority, table
//	                        → event only
//	principal_scope.operator_issued reason, active_session_id?, visible_session_count?
//	                        → event only
//	host.started    pid, hostname, start_marker
//	                        → event only (the hosts row is written beside it)
//	host.stopped    reason? ("gone" when reconciliation found it vanished), pid?, hostname?
//	                        → event only
//	host.reconciled gone_hosts, turns_lost, tasks_lost, deliveries_unknown, leases_released,
//	                        work_recovered, work_unknown, work_corrupt, work_deferred,
//	                        claims_released?
//	                        → event only
//	mcp.server_denied|server_failed
//	                server, core_id, core_revision, session_id, turn_id, state, error,
//	                        capability, transport
//	                        → event only (aggregate mcp_server "<core>:<server>")
//	agent_spawn.started|completed|blocked|failed|rejected
//	                task_id?, parent_session_id, parent_turn_id, parent_slot?, child_core_id,
//	                        child_session_id?, child_turn_id?, child_outcome?, error?
//	                        → event only (aggregate agent_spawn "<task id>" or, for a
//	                        rejection, the parent turn id)
//	agent_run.started turn_id, slot, agent_run_id, child_core_id
//	                        → event only (aggregate agent_run "<agent_run id>")
//	agent_run.completed turn_id, slot, agent_run_id, child_core_id, child_session_id,
//	                        child_turn_id?, child_outcome?, chars, error?
//	                        → event only
//	state.module_updated turn_id, slot, scope, owner, proposal_id, target, operation, patch
//	                        → the operation applied to the authored_state document of
//	                        (scope, owner) (aggregate authored_state "<scope>:<owner>"); a
//	                        write that no longer applies, or would pass the size limit,
//	                        leaves it as it is
//	channel_inbound.accepted core_id, channel, event_key, conversation_key, principal_key,
//	                        source?, reply_to?, text, metadata?, attachments? (aggregate channel_inbound
//	                        "<inbound id>", idempotency key "inbound:<core>:<channel>:<event_key>")
//	                        → channel_inbox row, status queued
//	channel_inbound.claimed|started|completed|retry_scheduled|dead_lettered
//	                claim_id, host_id?, attempts?, turn_id?, session_id?, result?,
//	                        last_error?, next_attempt_at?
//	                        → status (claimed, running, done, retry_scheduled, dead_letter),
//	                        claim_id, last_error and next_attempt_at replaced, the others
//	                        COALESCE
//	core.revision_published revision, parent?, objects, bytes, host_id?
//	                        → event only (aggregate core "live"; PublishCore writes the
//	                        core_revisions row, with the revision's git pack, beside it)
//	core.live_changed revision, previous?, op, host_id?
//	                        → the core_live row (name 'live'): the shared live revision of
//	                        the core repository, with the event's seq as last_seq
//
// # Commit observer
//
// SetCommitObserver installs one CommitObserver (publish.go), told of the
// events each write transaction inserted, right after its commit and in
// commit order: the Host's live session feed. It is asked once per
// transaction whether it observes; while it does not, nothing is collected
// or allocated. Publication is a hand-off that must not block; the
// transaction's writer connection is already free.
//
// # Queries
//
// Every list is bounded: a default and a maximum limit (the
// demiurge.Default*/Max* constants of each filter type; turns and the
// generic Query keep theirs here), served by an index, so its cost does not grow with the table.
// Lists are newest first except Events (seq ascending after a cursor) and
// RecentMessages (the newest window, returned in transcript order).
// SessionOwned puts the owner predicate in the SQL and answers a foreign id
// exactly like a missing one, with an audit event. Query is the generic
// debugging read of the spec.
//
// # Task logs
//
// AppendTaskLogs writes log lines straight into task_logs (no events) and,
// in the same transaction, deletes the task's lines beyond the newest
// maxLines (default DefaultTaskLogLines): tasks.log_lines counts every line
// a task logged and task_logs.line numbers them, so the trim is a range
// delete on idx_task_logs_line whose cost is the rows it removes. A task's
// log therefore never holds more than maxLines rows anywhere in the
// database, and an append costs the same at line 10 and at line 10
// million. TaskLogTail reads the newest lines through idx_task_logs_task.
// The bench driver measures time(100,000 lines) / time(10,000 lines)
// (target ≤ 12) and the rows kept (cmd/bench/internal/taskbench).
//
// # Task worker support
//
// AppendTaskBatches writes several guarded appends in one transaction (one
// savepoint each) and returns each task's row read in it: the worker's
// group commit. TaskCancelRequests (open requests of one Host, through the
// partial index idx_tasks_cancel_requested), TasksAwaitingCompletion
// (terminal tasks with an owner session, a notify_policy other than silent
// and no completion, through idx_tasks_completion_due) and
// AcknowledgeTaskCompletion (work.acknowledged plus
// task.completion_acknowledged in one transaction) serve the worker's
// loops, TaskCompletion finds a task's completion item through
// tasks.completion_work_id; each read costs the backlog, not the history.
//
// # Restart
//
// Reconcile marks running turns lost, unfinished tasks lost and sending
// deliveries unknown for Hosts that are gone, releases their session
// leases, and runs RecoverWork (so completion claims of a gone Host go back
// for retry once their lease expired); nothing is re-executed. The report
// lists the recorded process (pid, start marker) of each task it marked
// lost: the caller ends each group with process.KillGroupIfSame, which
// signals nothing if the pid now names another process. A Host on this
// machine is gone as soon as its process is (start markers detect pid reuse);
// one elsewhere, or without a start marker, when its lease expires. A live
// process matching its marker is never treated as gone, even past its lease.
// Work carrying no host_id (legacy) is treated as a gone Host's, so callers
// must stamp host_id on turn.started, task.submitted/started and
// delivery.sending.
//
// # Performance
//
// Append prepares its statements once per database (not per call), applies
// projections with single-row statements on indexed keys, and folds the
// derived session fields of a batch into one UPDATE per session.
// On PostgreSQL, where each statement is a round trip to the server, the
// events of a batch go in with one statement (sqlInsertEventRows, arrays
// unnested in batch order, RETURNING their seq) before their projections
// run; no projection reads runtime_events, so the result is the same.
// The bench driver compares it with bare event inserts of the same rows
// (cmd/bench/internal/storebench; target: Append throughput at least half
// of raw inserts, on SQLite and on PostgreSQL).
//
// # Failure modes
//
// Errors are demiurge.Error values: ENOTFOUND for missing rows (messages
// given per method), EINVALID for bad input, ECONFLICT for version and claim
// conflicts, ESCHEMA for refused databases, EUNAVAILABLE when the database
// stays busy, ECANCELED/ETIMEOUT when ctx ends, EINTERNAL otherwise. A
// failing projection fails the whole Append: nothing of the batch is
// written.
package store
