package store

import (
	"context"
	"errors"
	"strings"

	"github.com/demiurge/demiurge"
)

const taskSelect = `SELECT task_id, kind, status, root_task_id, parent_task_id, owner_session_id, owner_turn_id, core_id,
  host_id, source_json, notify_policy, result_ref, error_json, created_at, started_at, completed_at, heartbeat_at FROM tasks`

// Task returns one task; ENOTFOUND "task not found: <id>" when missing.
func (db *DB) Task(ctx context.Context, id string) (demiurge.Task, error) {
	tk, err := scanTask(db.reader.QueryRowContext(ctx, sqlTaskByID, id))
	if isNoRows(err) {
		return tk, demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", id)
	}
	return tk, db.codeError(ctx, err)
}

// ListTasks returns tasks newest first (created_at DESC, rowid DESC).
func (db *DB) ListTasks(ctx context.Context, f demiurge.TaskFilter) ([]demiurge.Task, error) {
	q, args := listTasksQuery(f)
	return db.queryTasks(ctx, q, args...)
}

// queryTasks runs a query of task rows and scans every row.
func (db *DB) queryTasks(ctx context.Context, q string, args ...any) ([]demiurge.Task, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Task
	for rows.Next() {
		tk, err := scanTask(rows)
		if err != nil {
			return nil, db.codeError(ctx, err)
		}
		out = append(out, tk)
	}
	return out, db.codeError(ctx, rows.Err())
}

func listTasksQuery(f demiurge.TaskFilter) (string, []any) {
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"owner_session_id", f.OwnerSessionID}, {"parent_task_id", f.ParentTaskID}, {"status", f.Status}, {"kind", f.Kind},
	} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	q := taskSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, rowid DESC LIMIT ?"
	return q, append(args, clampLimit(f.Limit, demiurge.DefaultTaskLimit, demiurge.MaxTaskLimit))
}

func scanTask(r scanner) (demiurge.Task, error) {
	var tk demiurge.Task
	var root, parent, session, turn, core, host, notify, result, started, completed, heartbeat ns
	var source, errJSON, created string
	if err := r.Scan(&tk.ID, &tk.Kind, &tk.Status, &root, &parent, &session, &turn, &core, &host, &source, &notify,
		&result, &errJSON, &created, &started, &completed, &heartbeat); err != nil {
		return tk, err
	}
	tk.RootTaskID, tk.ParentTaskID, tk.OwnerSessionID, tk.OwnerTurnID = root.String, parent.String, session.String, turn.String
	tk.CoreID, tk.HostID, tk.NotifyPolicy, tk.ResultRef = core.String, host.String, notify.String, result.String
	tk.Source = objectOrCorrupt(source)
	if m := objectOrCorrupt(errJSON); len(m) > 0 {
		tk.Error = m
	}
	tk.CreatedAt, tk.StartedAt = demiurge.ParseTime(created), parseTime(started)
	tk.CompletedAt, tk.HeartbeatAt = parseTime(completed), parseTime(heartbeat)
	return tk, nil
}

// sqlCancelRequests repeats the WHERE of idx_tasks_cancel_requested, so the
// poll reads only open tasks with a request.
var sqlCancelRequests = `SELECT task_id, COALESCE(cancel_reason, '') FROM tasks
  WHERE host_id = ? AND cancel_requested_at IS NOT NULL AND status IN ('queued', 'running', 'blocked_needs_user')`

// TaskCancelRequests returns the open (queued, running, blocked_needs_user)
// tasks of Host hostID that carry a cancel request (task.cancel_requested),
// each with the reason of its first request. The read is served by a
// partial index on the open requests, so a worker may poll it often.
func (db *DB) TaskCancelRequests(ctx context.Context, hostID string) (map[string]string, error) {
	rows, err := db.reader.QueryContext(ctx, sqlCancelRequests, hostID)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, reason string
		if err := rows.Scan(&id, &reason); err != nil {
			return nil, db.codeError(ctx, err)
		}
		out[id] = reason
	}
	return out, db.codeError(ctx, rows.Err())
}

// sqlCompletionDue repeats the WHERE of idx_tasks_completion_due and names
// it: without statistics the planner would pick idx_tasks_status, whose
// terminal entries grow with history.
var sqlCompletionDue = taskSelect + ` INDEXED BY idx_tasks_completion_due WHERE completion_work_id IS NULL AND owner_session_id IS NOT NULL
    AND (notify_policy IS NULL OR notify_policy != 'silent')
    AND status IN ('succeeded', 'failed', 'cancelled', 'lost')
  ORDER BY completed_at LIMIT ?`

// TasksAwaitingCompletion returns up to limit (default DefaultTaskLimit, at
// most MaxTaskLimit) terminal tasks, oldest completion first, that have an
// owner session and a notify_policy other than "silent" but no
// task.completion_ready yet: the completions a crash or another writer (a
// restart reconciliation, a cancel outside the worker) left to be emitted.
// Tasks that ended before schema 3 are never returned.
func (db *DB) TasksAwaitingCompletion(ctx context.Context, limit int) ([]demiurge.Task, error) {
	return db.queryTasks(ctx, sqlCompletionDue, clampLimit(limit, demiurge.DefaultTaskLimit, demiurge.MaxTaskLimit))
}

// AcknowledgeTaskCompletion ends a claimed task.completion work item: in one
// transaction it appends work.acknowledged (status acknowledged) and
// task.completion_acknowledged (aggregate task_completion, id workID,
// idempotency "task_completion:<id>:acknowledged").
// It fails like TransitionWork: ENOTFOUND "work item not found: <id>",
// ECONFLICT "stale durable claim for work <id>" when claimID is not the
// current claim, ECONFLICT "durable work cannot be overwritten: <id>" when
// the item is final, EINVALID when it is not a task.completion item.
func (db *DB) AcknowledgeTaskCompletion(ctx context.Context, workID, claimID string) (demiurge.WorkItem, error) {
	var out demiurge.WorkItem
	err := db.write(ctx, func(t *wtx) error {
		w, found, err := t.workItem(workID)
		switch {
		case err != nil:
			return err
		case !found:
			return workNotFound(workID)
		case w.Kind != demiurge.WorkKindTaskCompletion:
			return demiurge.Errorf(demiurge.EINVALID, "work %s is %s, not %s", workID, w.Kind, demiurge.WorkKindTaskCompletion)
		case w.ClaimID == "" || w.ClaimID != claimID:
			return demiurge.Errorf(demiurge.ECONFLICT, "stale durable claim for work %s", workID)
		case !workOverwritable(w.Status):
			return demiurge.Errorf(demiurge.ECONFLICT, "durable work cannot be overwritten: %s", workID)
		}
		if _, err := t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggWork, workID,
			demiurge.WorkAcknowledgedPayload{Status: demiurge.WorkAcknowledged})}, "", nil); err != nil {
			return err
		}
		ack := demiurge.NewEvent(demiurge.AggTaskCompletion, workID, demiurge.TaskCompletionAcknowledgedPayload{
			TaskID: w.ParentWorkID, ClaimID: claimID, WorkID: workID})
		if _, err := t.append([]demiurge.Event{ack}, "task_completion:"+workID+":acknowledged", nil); err != nil {
			return err
		}
		out, _, err = t.workItem(workID)
		return err
	})
	return out, err
}

var (
	sqlTaskByID        = taskSelect + ` WHERE task_id = ?`
	sqlSavepoint       = `SAVEPOINT task_batch`
	sqlSavepointUndo   = `ROLLBACK TO task_batch`
	sqlSavepointCommit = `RELEASE task_batch`
)

// AppendTaskBatches appends several batches in one write transaction, each
// as Append would alone (its own idempotency key and Expected guard), in
// order, inside a savepoint when one of them fails: a batch that fails (a guard that does not match,
// an invalid event) leaves nothing behind and does not affect the others.
// After the commit, each is called once per batch, in order, with the
// stored events (for a replayed key, the earlier ones), the row of the task
// the batch's first event names, read in the same transaction (the
// writer's page cache is warm, a reader's is not), and the batch's own
// error (ENOTFOUND "task not found: <id>" when the batch leaves no such
// row). The returned error is the transaction's (busy, cancelled); each is
// then not called. Writing many tasks' events in one transaction shares
// the pages they touch, which is what makes a busy worker fast.
func (db *DB) AppendTaskBatches(ctx context.Context, batches []demiurge.EventBatch, each func(i int, stored []demiurge.Event, tk demiurge.Task, err error)) error {
	type result struct {
		stored []demiurge.Event
		tk     demiurge.Task
		err    error
	}
	var results []result
	// The first attempt takes no savepoints: in the common case every
	// batch applies, and a savepoint costs two statements per batch (two
	// round trips on PostgreSQL). A batch that fails makes the attempt
	// roll back whole, and the group is written again with them.
	guarded := len(batches) == 1
	write := func(t *wtx) error {
		results = make([]result, len(batches))
		if !guarded {
			// On PostgreSQL independent batches go in set-wise.
			group, ok, err := t.appendGroup(batches)
			if err != nil {
				return err
			}
			if ok {
				for i, g := range group {
					results[i] = result{g.stored, g.task, nil}
				}
				return nil
			}
		}
		for i, b := range batches {
			if len(b.Events) == 0 {
				results[i].err = demiurge.Errorf(demiurge.EINVALID, "append task batch %d: no events", i)
				continue
			}
			if !guarded {
				stored, err := t.append(b.Events, b.IdempotencyKey, b.Expected)
				var tk demiurge.Task
				if err == nil {
					tk, err = t.taskOfBatch(stored)
				}
				if err != nil {
					return errUnguarded{err}
				}
				results[i] = result{stored, tk, nil}
				continue
			}
			if _, err := t.exec(sqlSavepoint); err != nil {
				return err
			}
			published := len(t.published)
			stored, err := t.append(b.Events, b.IdempotencyKey, b.Expected)
			var tk demiurge.Task
			if err == nil {
				tk, err = t.taskOfBatch(stored)
			}
			if err != nil {
				var coded *demiurge.Error
				if !errors.As(err, &coded) {
					return err // busy, cancelled or broken: the whole transaction fails
				}
				t.sessionDeltas, t.sessionOrder = nil, nil
				t.published = t.published[:published] // undone: never committed
				if _, rerr := t.exec(sqlSavepointUndo); rerr != nil {
					return rerr
				}
				stored = nil
			}
			if _, rerr := t.exec(sqlSavepointCommit); rerr != nil {
				return rerr
			}
			results[i] = result{stored, tk, err}
		}
		return nil
	}
	err := db.write(ctx, write)
	if errors.As(err, new(errUnguarded)) {
		guarded = true
		err = db.write(ctx, write)
	}
	if err != nil {
		return err
	}
	for i, r := range results {
		each(i, r.stored, r.tk, r.err)
	}
	return nil
}

// errUnguarded aborts an attempt of AppendTaskBatches without savepoints
// at its first failing batch.
type errUnguarded struct{ error }

// taskOfBatch reads the row of the task a batch's first stored event
// names; ENOTFOUND "task not found: <id>" when there is none.
func (t *wtx) taskOfBatch(stored []demiurge.Event) (demiurge.Task, error) {
	id := stored[0].AggregateID
	tk, err := scanTask(t.queryRow(sqlTaskByID, id))
	if isNoRows(err) {
		err = demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", id)
	}
	return tk, err
}

// TaskCompletion returns the task.completion work item of task taskID
// (task.completion_ready, tasks.completion_work_id); ok is false when the
// task has none (yet, or ever). ENOTFOUND "task not found: <id>" for a
// missing task.
func (db *DB) TaskCompletion(ctx context.Context, taskID string) (demiurge.WorkItem, bool, error) {
	var workID ns
	err := db.reader.QueryRowContext(ctx, `SELECT completion_work_id FROM tasks WHERE task_id = ?`, taskID).Scan(&workID)
	if isNoRows(err) {
		return demiurge.WorkItem{}, false, demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", taskID)
	}
	if err != nil || workID.String == "" {
		return demiurge.WorkItem{}, false, db.codeError(ctx, err)
	}
	w, err := db.WorkItem(ctx, workID.String)
	if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
		return w, false, nil
	}
	return w, err == nil, err
}
