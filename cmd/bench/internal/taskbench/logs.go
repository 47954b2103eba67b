package taskbench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
	_ "modernc.org/sqlite" // the "sqlite" driver the store uses
)

// Shape of the log scaling measurement: lines are appended in batches of
// logScalingBatch to a task keeping store.store.DefaultTaskLogLines.
const (
	logScalingBatch = 64
	logScalingSmall = 10_000
	logScalingLarge = 100_000
)

// MeasureLogScaling appends 10,000 and then 100,000 lines to two tasks
// of a fresh database in dir (file task-log-scaling.sqlite3, replaced if
// present) and reports ratio = time(100,000)/time(10,000) (target ≤ 12: the
// append cost does not grow with the log), rows = the rows anywhere in the
// database that hold the large log's lines (task_logs rows plus task.log
// events, counted over a read-only connection of its own; target ≤
// store.store.DefaultTaskLogLines), and tailOK = the tail holds
// store.store.DefaultTaskLogLines lines in order, ending with the newest.
func MeasureLogScaling(ctx context.Context, dir string) (ratio float64, rows int, tailOK bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, 0, false, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create %s", dir)
	}
	path := filepath.Join(dir, "task-log-scaling.sqlite3")
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + s); err != nil && !os.IsNotExist(err) {
			return 0, 0, false, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "remove %s", path+s)
		}
	}
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return 0, 0, false, err
	}
	defer db.Close()
	run := func(n int) (string, time.Duration, error) {
		id := demiurge.NewID("task")
		if _, err := db.Append(ctx, []demiurge.Event{demiurge.NewEvent(demiurge.AggTask, id,
			demiurge.TaskSubmittedPayload{Kind: "terminal.exec"})}, "", nil); err != nil {
			return "", 0, err
		}
		start := time.Now()
		batch := make([]demiurge.TaskLogLine, 0, logScalingBatch)
		for i := range n {
			batch = append(batch, demiurge.TaskLogLine{Stream: "stdout", Text: fmt.Sprintf("line %d of the task log", i)})
			if len(batch) == logScalingBatch || i == n-1 {
				if err := db.AppendTaskLogs(ctx, id, batch, store.DefaultTaskLogLines); err != nil {
					return "", 0, err
				}
				batch = batch[:0]
			}
		}
		return id, time.Since(start), nil
	}
	if _, _, err := run(logScalingSmall); err != nil { // warm the caches and the file
		return 0, 0, false, err
	}
	_, small, err := run(logScalingSmall)
	if err != nil {
		return 0, 0, false, err
	}
	id, large, err := run(logScalingLarge)
	if err != nil {
		return 0, 0, false, err
	}
	logRows, eventRows, err := countLogRows(ctx, path, id)
	if err != nil {
		return 0, 0, false, err
	}
	tail, err := db.TaskLogTail(ctx, id, store.DefaultTaskLogLines)
	if err != nil {
		return 0, 0, false, err
	}
	tailOK = len(tail) == store.DefaultTaskLogLines
	for i, l := range tail {
		if l.Text != fmt.Sprintf("line %d of the task log", logScalingLarge-store.DefaultTaskLogLines+i) {
			tailOK = false
			break
		}
	}
	return large.Seconds() / small.Seconds(), logRows + eventRows, tailOK, nil
}

// countLogRows counts, over a read-only connection of its own, the rows
// of task id's log: task_logs rows and task.log events.
func countLogRows(ctx context.Context, path, id string) (logRows, eventRows int, err error) {
	u := url.URL{Path: path}
	db, err := sql.Open("sqlite", "file:"+u.EscapedPath()+"?mode=ro&_pragma=busy_timeout(1000)&_pragma=query_only(1)")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM task_logs WHERE task_id = ?`, id).Scan(&logRows); err != nil {
		return 0, 0, err
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runtime_events WHERE aggregate_type = ? AND aggregate_id = ? AND type = ?`,
		demiurge.AggTask, id, demiurge.EvTaskLog).Scan(&eventRows); err != nil {
		return 0, 0, err
	}
	return logRows, eventRows, nil
}
