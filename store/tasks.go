package store

import (
	"context"
	"strings"

	"github.com/demiurge/demiurge"
)

const taskSelect = `SELECT task_id, kind, status, root_task_id, parent_task_id, owner_session_id, owner_turn_id, core_id,
  host_id, source_json, notify_policy, result_ref, error_json, created_at, started_at, completed_at, heartbeat_at FROM tasks`

// Task returns one task; ENOTFOUND "task not found: <id>" when missing.
func (db *DB) Task(ctx context.Context, id string) (demiurge.Task, error) {
	tk, err := scanTask(db.reader.QueryRowContext(ctx, taskSelect+` WHERE task_id = ?`, id))
	if isNoRows(err) {
		return tk, demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", id)
	}
	return tk, db.codeError(ctx, err)
}

// ListTasks returns tasks newest first (created_at DESC, rowid DESC).
func (db *DB) ListTasks(ctx context.Context, f demiurge.TaskFilter) ([]demiurge.Task, error) {
	q, args := listTasksQuery(f)
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
