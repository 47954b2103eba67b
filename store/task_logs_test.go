package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func submitTask(tb testing.TB, db *store.DB, id string, p map[string]any) {
	tb.Helper()
	if p == nil {
		p = map[string]any{}
	}
	p["kind"] = "terminal.exec"
	mustAppend(tb, db, "", ev(demiurge.AggTask, id, demiurge.EvTaskSubmitted, p))
}

func logLines(from, n int) []demiurge.TaskLogLine {
	out := make([]demiurge.TaskLogLine, n)
	for i := range out {
		out[i] = demiurge.TaskLogLine{Text: fmt.Sprintf("line %d", from+i)}
	}
	return out
}

func countRows(tb testing.TB, db *store.DB, table string, where map[string]any) int {
	tb.Helper()
	rows, err := db.Query(context.Background(), store.Query{Table: table, Where: where, Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	return len(rows)
}

// Retention is enforced by the append: the rows of a task never exceed
// maxLines, the tail always ends with the newest line, and lines of other
// tasks are untouched.
func TestAppendTaskLogsKeepsNewestLines(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	submitTask(t, db, "task_a", nil)
	submitTask(t, db, "task_b", nil)
	if err := db.AppendTaskLogs(ctx, "task_b", logLines(0, 3), 10); err != nil {
		t.Fatal(err)
	}
	const max = 50
	next := 0
	for _, n := range []int{1, 7, 64, 64, 3, 120, 64, 1} { // one batch larger than the retention
		if err := db.AppendTaskLogs(ctx, "task_a", logLines(next, n), max); err != nil {
			t.Fatal(err)
		}
		next += n
		tail, err := db.TaskLogTail(ctx, "task_a", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(tail), min(next, max); got != want {
			t.Fatalf("after %d lines: %d retained, want %d", next, got, want)
		}
		for i, l := range tail {
			if want := fmt.Sprintf("line %d", next-len(tail)+i); l.Text != want || l.Stream != "stdout" {
				t.Fatalf("after %d lines: tail[%d] = %+v, want %q", next, i, l, want)
			}
		}
		if got := countRows(t, db, "task_logs", map[string]any{"task_id": "task_a"}); got != len(tail) {
			t.Fatalf("%d rows persisted, tail %d", got, len(tail))
		}
	}
	if got := countRows(t, db, "task_logs", map[string]any{"task_id": "task_b"}); got != 3 {
		t.Fatalf("other task kept %d lines, want 3", got)
	}
	if got := countRows(t, db, "runtime_events", map[string]any{"aggregate_id": "task_a"}); got != 1 {
		t.Fatalf("log lines wrote events: %d events for the task", got)
	}
	tail, _ := db.TaskLogTail(ctx, "task_a", 2)
	if len(tail) != 2 || tail[1].Text != fmt.Sprintf("line %d", next-1) {
		t.Fatalf("short tail %+v", tail)
	}
	err := db.AppendTaskLogs(ctx, "task_missing", logLines(0, 1), 10)
	wantCode(t, err, demiurge.ENOTFOUND)
	if err.Error() != "task not found: task_missing" {
		t.Fatalf("error %q", err)
	}
}

// task.log events land in the same bounded table, numbered in the same
// sequence as direct appends.
func TestTaskLogEventsShareRetention(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	submitTask(t, db, "task_a", nil)
	if err := db.AppendTaskLogs(ctx, "task_a", logLines(0, store.DefaultTaskLogLines-1), 0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_a", demiurge.EvTaskLog, map[string]any{"text": "event 1", "stream": "stderr"}),
		ev(demiurge.AggTask, "task_a", demiurge.EvTaskLog, map[string]any{"text": "event 2"}))
	tail, err := db.TaskLogTail(ctx, "task_a", store.MaxTaskLogTail)
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != store.DefaultTaskLogLines || tail[0].Text != "line 1" || tail[len(tail)-2].Stream != "stderr" ||
		tail[len(tail)-1].Text != "event 2" {
		t.Fatalf("%d lines: first %+v last %+v", len(tail), tail[0], tail[len(tail)-1])
	}
}

func BenchmarkAppendTaskLogs64(b *testing.B) {
	db := demiurgetest.MustOpenDB(b)
	ctx := context.Background()
	submitTask(b, db, "task_bench", nil)
	const flush = 64 // lines the task worker flushes at once
	batch := logLines(0, flush)
	b.ResetTimer()
	for range b.N {
		if err := db.AppendTaskLogs(ctx, "task_bench", batch, store.DefaultTaskLogLines); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*flush)/b.Elapsed().Seconds(), "lines/s")
}
