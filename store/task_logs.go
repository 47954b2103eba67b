package store

import (
	"context"

	"github.com/demiurge/demiurge"
)

// DefaultTaskLogLines is the retention of a task's log when the caller names
// none (spec max_log_lines).
const DefaultTaskLogLines = 4000

// MaxTaskLogTail bounds one TaskLogTail read.
const MaxTaskLogTail = 10000

var (
	// sqlTaskLogCount moves a task's line counter and returns the new total.
	sqlTaskLogCount  = `UPDATE tasks SET log_lines = log_lines + ?1 WHERE task_id = ?2 RETURNING log_lines`
	sqlTaskLogInsert = `INSERT INTO task_logs (task_id, stream, text, created_at, line) VALUES (?, ?, ?, ?, ?)`
	// sqlTaskLogTrim drops the lines that fell out of retention. Older
	// lines were dropped by earlier appends, so the range it walks on
	// idx_task_logs_line holds exactly the rows it deletes.
	sqlTaskLogTrim = `DELETE FROM task_logs WHERE task_id = ?1 AND line <= ?2`
	sqlTaskLogTail = `SELECT seq, stream, text, created_at FROM task_logs WHERE task_id = ? ORDER BY seq DESC LIMIT ?`
)

// AppendTaskLogs appends lines to the log of task taskID and drops the lines
// beyond the newest maxLines (default DefaultTaskLogLines), in one
// transaction. Log lines are kept as task_logs rows only, not as events: a
// task keeps at most maxLines rows however long it logs, and an append costs
// the same whatever the length of the log before it. An empty stream is
// stdout; a zero CreatedAt is the transaction time. It fails with ENOTFOUND
// "task not found: <id>" when the task is missing.
func (db *DB) AppendTaskLogs(ctx context.Context, taskID string, lines []demiurge.TaskLogLine, maxLines int) error {
	if len(lines) == 0 {
		return nil
	}
	return db.write(ctx, func(t *wtx) error {
		found, err := t.appendTaskLogs(taskID, lines, maxLines)
		if err == nil && !found {
			err = demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", taskID)
		}
		return err
	})
}

// appendTaskLogs is AppendTaskLogs inside a write transaction; found is
// false, and nothing is written, when the task has no row.
func (t *wtx) appendTaskLogs(taskID string, lines []demiurge.TaskLogLine, maxLines int) (found bool, err error) {
	if maxLines <= 0 {
		maxLines = DefaultTaskLogLines
	}
	var total int64
	if err := t.queryRow(sqlTaskLogCount, len(lines), taskID).Scan(&total); err != nil {
		if isNoRows(err) {
			return false, nil
		}
		return false, err
	}
	first := total - int64(len(lines)) + 1 // line number of lines[0]
	// Lines that would be trimmed at once are counted but never written.
	skip := max(len(lines)-maxLines, 0)
	for i, l := range lines[skip:] {
		at := l.CreatedAt
		if at.IsZero() {
			at = t.now
		}
		stream := l.Stream
		if stream == "" {
			stream = "stdout"
		}
		if _, err := t.exec(sqlTaskLogInsert, taskID, stream, l.Text, demiurge.FormatTime(at), first+int64(skip+i)); err != nil {
			return true, err
		}
	}
	if cut := total - int64(maxLines); cut > 0 {
		if _, err := t.exec(sqlTaskLogTrim, taskID, cut); err != nil {
			return true, err
		}
	}
	return true, nil
}

// TaskLogTail returns the newest n (at most MaxTaskLogTail) retained lines
// of task taskID, oldest first. A missing task has no lines.
func (db *DB) TaskLogTail(ctx context.Context, taskID string, n int) ([]demiurge.TaskLogLine, error) {
	n = min(n, MaxTaskLogTail)
	if n <= 0 {
		return nil, nil
	}
	rows, err := db.reader.QueryContext(ctx, sqlTaskLogTail, taskID, n)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.TaskLogLine
	for rows.Next() {
		var l demiurge.TaskLogLine
		var created string
		if err := rows.Scan(&l.Seq, &l.Stream, &l.Text, &created); err != nil {
			return nil, db.codeError(ctx, err)
		}
		l.CreatedAt = demiurge.ParseTime(created)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, db.codeError(ctx, err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
