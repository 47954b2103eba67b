package store

import "strings"

// pgStatements maps the statements that use SQLite's own functions to
// their PostgreSQL form (still with SQLite placeholders; toPostgres numbers
// them). Everything else runs as written.
var pgStatements = map[string]string{
	// json_set/json_patch on a text column: jsonb_set with a shallow merge
	// (the patch is a flat object of strings); demiurge_json_valid is
	// json_valid (schema_postgres.sql).
	sqlMessageAnnotate: `UPDATE messages SET content_json = jsonb_set(content_json::jsonb, '{metadata}',
  (CASE WHEN jsonb_typeof(content_json::jsonb -> 'metadata') = 'object'
    THEN content_json::jsonb -> 'metadata' ELSE '{}'::jsonb END) || ?1::jsonb)::text
  WHERE message_id = ?2 AND demiurge_json_valid(content_json)`,
	// The columns of a table, rowid (the tiebreak column SQLite keeps
	// hidden) left out.
	sqlTableColumns: `SELECT column_name FROM information_schema.columns
  WHERE table_schema = current_schema() AND table_name = ? AND column_name <> 'rowid'`,
}

// pgReplace is what PostgreSQL needs to run SQLite's INSERT OR REPLACE on a
// table: the key the row conflicts on, and the columns the statement does
// not list, which REPLACE (a delete and an insert) resets to their
// defaults.
var pgReplace = map[string]struct {
	key   string
	reset []string
}{
	"outbox":              {key: "delivery_id"},
	"artifacts":           {key: "artifact_id"},
	"scheduler_instances": {key: "core_id, schedule_id, due_at"},
	"tool_calls":          {key: "call_id"},
	"runtime_work_items":  {key: "work_id"},
	"tasks": {key: "task_id", reset: []string{"log_lines", "cancel_requested_at", "cancel_reason",
		"process_pid", "process_marker", "completion_work_id", "claim_host_id", "claim_expires_at"}},
}

// pgInsertOr rewrites INSERT OR IGNORE (ON CONFLICT DO NOTHING) and INSERT
// OR REPLACE (an upsert on the table's key that sets every column) for
// PostgreSQL; other statements come back unchanged.
func pgInsertOr(q string) string {
	if rest, ok := strings.CutPrefix(q, "INSERT OR IGNORE INTO "); ok {
		return "INSERT INTO " + rest + " ON CONFLICT DO NOTHING"
	}
	rest, ok := strings.CutPrefix(q, "INSERT OR REPLACE INTO ")
	if !ok {
		return q
	}
	table, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	table, _, _ = strings.Cut(table, "\n")
	spec, known := pgReplace[table]
	open, end := strings.IndexByte(rest, '('), strings.IndexByte(rest, ')')
	if !known || open < 0 || end < open {
		return q // fails at prepare: a table pgReplace lacks
	}
	keys := map[string]bool{}
	for _, k := range strings.Split(spec.key, ",") {
		keys[strings.TrimSpace(k)] = true
	}
	var set []string
	for _, c := range strings.Split(rest[open+1:end], ",") {
		if c = strings.TrimSpace(c); !keys[c] {
			set = append(set, c+" = excluded."+c)
		}
	}
	for _, c := range spec.reset {
		set = append(set, c+" = DEFAULT")
	}
	return "INSERT INTO " + rest + " ON CONFLICT (" + spec.key + ") DO UPDATE SET " + strings.Join(set, ", ")
}
