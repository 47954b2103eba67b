package store

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// DefaultTaskClaimLease is how long a claim on a queued task holds when
// the claimer names none: a Host starts what it claimed within
// milliseconds, so the lease only matters when the Host died in between.
const DefaultTaskClaimLease = 5 * time.Second

// maxTaskClaim bounds one ClaimQueuedTasks.
const maxTaskClaim = 512

// queueWhere selects the claimable queued tasks of a Host: queued for any
// Host or for this one, of a kind it runs, with no live claim. The
// partial index idx_tasks_queue serves it, so its cost follows the queue,
// not the history.
func queueWhere(kinds int, shared bool) string {
	host := `host_id = ?`
	if shared {
		host = `(host_id IS NULL OR host_id = ?)`
	}
	return `status = 'queued' AND ` + host + `
  AND kind IN (?` + strings.Repeat(", ?", kinds-1) + `)
  AND (claim_expires_at IS NULL OR claim_expires_at <= ?)`
}

func queueArgs(hostID string, kinds []string, now string) []any {
	args := []any{hostID}
	for _, k := range kinds {
		args = append(args, k)
	}
	return append(args, now)
}

// ClaimQueuedTasks claims up to limit queued tasks (oldest first) for
// Host hostID under a lease (default DefaultTaskClaimLease): tasks queued
// for hostID and, when shared, for any Host, of one of kinds, not claimed
// or whose claim lapsed. It returns their ids. A claim is a lease on the row, not an
// event: the task stays queued until StartClaimedTasks starts it, and a
// claim that lapses (or whose Host reconciliation found gone) leaves it to
// the next claimer.
//
// On PostgreSQL the claim takes no ledger lock: the candidates are locked
// FOR UPDATE SKIP LOCKED, so Hosts claiming at once take disjoint tasks
// without waiting for each other. A read answers the common empty queue
// without a write transaction.
func (db *DB) ClaimQueuedTasks(ctx context.Context, hostID string, shared bool, kinds []string, limit int, lease time.Duration) ([]string, error) {
	if hostID == "" || len(kinds) == 0 {
		return nil, demiurge.Errorf(demiurge.EINVALID, "claim queued tasks: a host id and at least one kind are required")
	}
	if lease <= 0 {
		lease = DefaultTaskClaimLease
	}
	limit = clampLimit(limit, 1, maxTaskClaim)
	now := demiurge.FormatTime(db.now().UTC())
	var one int
	err := db.reader.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE `+queueWhere(len(kinds), shared)+` LIMIT 1`,
		queueArgs(hostID, kinds, now)...).Scan(&one)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	lock := ""
	if db.dialect.engine == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := `UPDATE tasks SET claim_host_id = ?, claim_expires_at = ?
  WHERE task_id IN (SELECT task_id FROM tasks WHERE ` + queueWhere(len(kinds), shared) + `
    ORDER BY created_at, rowid LIMIT ?` + lock + `)
  RETURNING task_id, created_at, rowid`
	type claimed struct {
		id, created string
		rowid       int64
	}
	var got []claimed
	err = db.writeRows(ctx, func(t *wtx) error {
		got = got[:0]
		args := append([]any{hostID, demiurge.FormatTime(t.now.Add(lease))}, queueArgs(hostID, kinds, t.nowText())...)
		rows, err := t.query(q, append(args, limit)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c claimed
			if err := rows.Scan(&c.id, &c.created, &c.rowid); err != nil {
				return err
			}
			got = append(got, c)
		}
		return rows.Err()
	})
	// RETURNING follows no order: put the claims back in queue order.
	slices.SortFunc(got, func(a, b claimed) int {
		return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.rowid, b.rowid))
	})
	ids := make([]string, len(got))
	for i, c := range got {
		ids[i] = c.id
	}
	return ids, err
}

// StartClaimedTasks starts, in one transaction, each task of ids that is
// still queued under Host hostID's claim: event task.started {host_id}
// (which clears the claim). Tasks cancelled meanwhile, or claimed by
// another Host after this claim lapsed, are left out. It returns the
// started tasks in the order of ids. The work is set-based (a read of the
// candidates, one append of every start, a read of their rows and one of
// their actions), so a batch costs a few statements, not a few per task.
func (db *DB) StartClaimedTasks(ctx context.Context, hostID string, ids []string) ([]demiurge.StartedTask, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []demiurge.StartedTask
	err := db.write(ctx, func(t *wtx) error {
		out = out[:0]
		cond, args := t.anyID("task_id", ids)
		startable, err := t.strings(`SELECT task_id FROM tasks WHERE status = 'queued' AND claim_host_id = ? AND `+cond,
			append([]any{hostID}, args...)...)
		if err != nil || len(startable) == 0 {
			return err
		}
		ok := map[string]bool{}
		for _, id := range startable {
			ok[id] = true
		}
		var events []demiurge.Event
		for _, id := range ids {
			if ok[id] {
				events = append(events, demiurge.NewEvent(demiurge.AggTask, id,
					demiurge.TaskStartedPayload{Status: demiurge.TaskRunning, HostID: hostID}))
			}
		}
		stored, err := t.append(events, "", nil)
		if err != nil {
			return err
		}
		tasks, err := t.tasksByID(stored)
		if err != nil {
			return err
		}
		actions, err := t.taskActions(stored)
		if err != nil {
			return err
		}
		for _, e := range stored {
			out = append(out, demiurge.StartedTask{Task: tasks[e.AggregateID], Seq: e.Seq, Action: actions[e.AggregateID]})
		}
		return nil
	})
	return out, err
}

// strings runs a query of one text column.
func (t *wtx) strings(q string, args ...any) ([]string, error) {
	return scanStrings(t.query(q, args...))
}

// aggregateIDs are the aggregate ids of events.
func aggregateIDs(events []demiurge.Event) []string {
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.AggregateID
	}
	return ids
}

// tasksByID reads the rows of the tasks events name, by id.
func (t *wtx) tasksByID(events []demiurge.Event) (map[string]demiurge.Task, error) {
	cond, args := t.anyID("task_id", aggregateIDs(events))
	rows, err := t.query(taskSelect+` WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]demiurge.Task, len(events))
	for rows.Next() {
		tk, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out[tk.ID] = tk
	}
	return out, rows.Err()
}

// taskActions are the actions (TaskSpec.Payload) the tasks events name were
// submitted with, read from their task.submitted events; a corrupt or
// missing payload reads as none.
func (t *wtx) taskActions(events []demiurge.Event) (map[string]map[string]any, error) {
	cond, args := t.anyID("aggregate_id", aggregateIDs(events))
	rows, err := t.query(`SELECT aggregate_id, payload_json FROM runtime_events
  WHERE aggregate_type = 'task' AND type = 'task.submitted' AND `+cond+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]map[string]any, len(events))
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		var p demiurge.TaskSubmittedPayload
		if _, seen := out[id]; !seen && json.Unmarshal([]byte(raw), &p) == nil && p.Action != nil {
			out[id] = p.Action
		}
	}
	for _, e := range events {
		if out[e.AggregateID] == nil {
			out[e.AggregateID] = map[string]any{}
		}
	}
	return out, rows.Err()
}

// ReleaseTaskClaims drops Host hostID's claims on the tasks of ids that are
// still queued, so another Host may take them at once (a Host that claimed
// more than it will start, or is closing).
func (db *DB) ReleaseTaskClaims(ctx context.Context, hostID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return db.writeRows(ctx, func(t *wtx) error {
		cond, args := t.anyID("task_id", ids)
		if _, err := t.exec(`UPDATE tasks SET claim_host_id = NULL, claim_expires_at = NULL
  WHERE status = 'queued' AND claim_host_id = ? AND `+cond, append([]any{hostID}, args...)...); err != nil {
			return err
		}
		t.note(demiurge.TopicTasks)
		return nil
	})
}
