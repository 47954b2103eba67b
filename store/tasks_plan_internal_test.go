package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The task worker's polls and the log append run often; each must be
// served by its index, whatever the number of tasks and log lines.
func TestTaskQueryPlansUseIndexes(t *testing.T) {
	sqliteOnly(t)
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "plan.sqlite3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range []struct {
		name, q, index string
		args           []any
	}{
		{"log tail", sqlTaskLogTail, "idx_task_logs_task", []any{"t", 10}},
		{"log trim", sqlTaskLogTrim, "idx_task_logs_line", []any{"t", 10}},
		{"cancel requests", sqlCancelRequests, "idx_tasks_cancel_requested", []any{"h"}},
		{"completions due", sqlCompletionDue, "idx_tasks_completion_due", []any{10}},
	} {
		rows, err := db.reader.Query("EXPLAIN QUERY PLAN "+p.q, p.args...)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		var lines []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		rows.Close()
		text := strings.Join(lines, "\n")
		if !strings.Contains(text, p.index) || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: plan does not use %s alone:\n%s", p.name, p.index, text)
		}
	}
}
