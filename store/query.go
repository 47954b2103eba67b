package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
)

// Limits of Query.
const (
	DefaultQueryLimit = 100
	MaxQueryLimit     = 1000
)

// Query is a generic projection read.
type Query struct {
	Table      string         // one of the sixteen runtime tables
	Where      map[string]any // column = value (nil: IS NULL), all ANDed
	OrderBy    string         // one of the order columns; empty: table order
	Limit      int            // default DefaultQueryLimit, at most MaxQueryLimit
	Offset     int
	Descending bool // requires OrderBy
}

// queryTables are the tables Query may read.
var queryTables = map[string]bool{
	"runtime_events": true, "tasks": true, "task_logs": true, "task_dependencies": true, "leases": true,
	"approvals": true, "outbox": true, "sessions": true, "turns": true, "messages": true, "tool_calls": true,
	"artifacts": true, "scheduler_instances": true, "runtime_work_items": true, "session_bindings": true,
	"session_owners": true,
}

// queryOrderBy are the columns Query may order by.
var queryOrderBy = map[string]bool{
	"seq": true, "runtime_seq": true, "created_at": true, "updated_at": true, "started_at": true,
	"completed_at": true, "due_at": true, "lease_expires_at": true, "next_attempt_at": true,
}

var columnName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]+$`) })

// Query returns rows of one runtime table as maps. Every x_json column is
// returned decoded under the key x; JSON that does not decode becomes
// {"_corrupt_json": raw}. It fails with EINVALID for a table outside the
// whitelist, a column name that is not [A-Za-z0-9_]+ or not in the table, an
// order_by outside the whitelist or not in the table, and Descending without
// OrderBy. Ties in OrderBy fall back to rowid, in the same direction.
func (db *DB) Query(ctx context.Context, q Query) ([]map[string]any, error) {
	if !queryTables[q.Table] {
		return nil, demiurge.Errorf(demiurge.EINVALID, "unsupported runtime table: %s", q.Table)
	}
	cols, err := db.columns(ctx, q.Table)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(q.Where))
	for k := range q.Where {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var where []string
	var args []any
	for _, k := range keys {
		if !columnName().MatchString(k) {
			return nil, demiurge.Errorf(demiurge.EINVALID, "invalid column name: %q", k)
		}
		if !cols[k] {
			return nil, demiurge.Errorf(demiurge.EINVALID, "unknown column %s in table %s", k, q.Table)
		}
		if q.Where[k] == nil {
			where = append(where, k+" IS NULL")
			continue
		}
		where = append(where, k+" = ?")
		args = append(args, sqlValue(q.Where[k]))
	}
	stmt := "SELECT * FROM " + q.Table
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	switch {
	case q.OrderBy != "":
		if !queryOrderBy[q.OrderBy] {
			return nil, demiurge.Errorf(demiurge.EINVALID, "unsupported order_by: %s", q.OrderBy)
		}
		if !cols[q.OrderBy] {
			return nil, demiurge.Errorf(demiurge.EINVALID, "order_by column %s is not in table %s", q.OrderBy, q.Table)
		}
		dir := ""
		if q.Descending {
			dir = " DESC"
		}
		// seq, where a table has it, is its rowid (INTEGER PRIMARY KEY on
		// SQLite, the identity column on PostgreSQL).
		tie := "rowid"
		if cols["seq"] {
			tie = "seq"
		}
		stmt += " ORDER BY " + q.OrderBy + dir + ", " + tie + dir
	case q.Descending:
		return nil, demiurge.Errorf(demiurge.EINVALID, "descending requires order_by")
	}
	stmt += " LIMIT ? OFFSET ?"
	args = append(args, clampLimit(q.Limit, DefaultQueryLimit, MaxQueryLimit), max(q.Offset, 0))

	rows, err := db.reader.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	var out []map[string]any
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, db.codeError(ctx, err)
		}
		m := make(map[string]any, len(names))
		for i, name := range names {
			v := vals[i]
			if name == "rowid" {
				continue // PostgreSQL's stand-in for SQLite's hidden rowid
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			if base, ok := strings.CutSuffix(name, "_json"); ok {
				m[base] = decodeColumn(v)
				continue
			}
			m[name] = v
		}
		out = append(out, m)
	}
	return out, db.codeError(ctx, rows.Err())
}

// decodeColumn decodes a JSON column value; NULL stays nil and JSON that
// does not decode becomes {"_corrupt_json": raw}.
func decodeColumn(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	var dec any
	if err := json.Unmarshal([]byte(s), &dec); err != nil {
		return map[string]any{"_corrupt_json": s}
	}
	return dec
}

// sqlValue turns a where value into an SQL argument.
func sqlValue(v any) any {
	switch x := v.(type) {
	case string, int, int64, int32, float64, bool, []byte:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// sqlTableColumns lists a table's columns (on PostgreSQL, pgStatements).
const sqlTableColumns = "SELECT name FROM pragma_table_info(?)"

// columns returns the column set of a whitelisted table (cached).
func (db *DB) columns(ctx context.Context, table string) (map[string]bool, error) {
	db.colMu.Lock()
	defer db.colMu.Unlock()
	if c := db.cols[table]; c != nil {
		return c, nil
	}
	rows, err := db.reader.QueryContext(ctx, sqlTableColumns, table)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	c := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, db.codeError(ctx, err)
		}
		c[n] = true
	}
	if err := rows.Err(); err != nil {
		return nil, db.codeError(ctx, err)
	}
	db.cols[table] = c
	return c, nil
}
