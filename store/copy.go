package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
)

// TableCount is how many rows of one table a copy moved.
type TableCount struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
}

// CopyReport is what CopyLedger copied: every table of the ledger (by
// name, empty ones too) with its row count, verified equal in source and
// target.
type CopyReport struct {
	// Source is the SQLite file; Target the PostgreSQL database as
	// postgres://host:port/name (no user, no password).
	Source, Target string
	SchemaVersion  int
	Tables         []TableCount
	Rows           int64 // the sum over Tables
}

// CopyLedger copies every row of the SQLite ledger src into the PostgreSQL
// ledger dst, which must be empty (its schema only, as Open creates it):
// every table and every column, event seqs and ids, task log seqs and the
// rowid insertion order as they are, and the identity sequences advanced
// past the copied values, so the ledger continues on PostgreSQL where it
// stopped on SQLite.
//
// It is all or nothing and runs once: the copy is one PostgreSQL
// transaction under the ledger's write lock (sqlWriteLock), committed only
// after the row count of every table was verified equal on both sides; a
// failure leaves dst without a row. src is read inside one SQLite write
// transaction (BEGIN IMMEDIATE), so no other process writes it while it is
// copied, and the copy is of one consistent state.
//
// Refusals, before anything is copied: ECONFLICT while a Host registered
// in src is alive (judged as reconciliation judges it: not stopped, and its
// lease current or its process on this machine alive); ECONFIG when dst
// holds any row; EINVALID when src is not SQLite or dst not PostgreSQL.
// Open has already refused a database of a newer schema on either side.
// Errors name the database by DescribeURL's form, never with a password.
func CopyLedger(ctx context.Context, src, dst *DB) (CopyReport, error) {
	if src.Engine() != SQLite || dst.Engine() != Postgres {
		return CopyReport{}, demiurge.Errorf(demiurge.EINVALID,
			"a ledger copy goes from SQLite to PostgreSQL, not from %s (%s) to %s (%s)", src.Engine(), src.path, dst.Engine(), dst.path)
	}
	rep := CopyReport{Source: src.path, Target: dst.path, SchemaVersion: SchemaVersion()}
	err := src.write(ctx, func(t *wtx) error {
		if err := refuseLiveHosts(t); err != nil {
			return err
		}
		tables, err := sqliteTables(t)
		if err != nil {
			return src.codeError(ctx, err)
		}
		counts, err := copyToPostgres(ctx, t, tables, dst)
		rep.Tables = counts
		return err
	})
	if err != nil {
		return CopyReport{}, err
	}
	for _, c := range rep.Tables {
		rep.Rows += c.Rows
	}
	return rep, nil
}

// refuseLiveHosts fails with ECONFLICT when a Host registered in the
// ledger of t still runs: what it writes after the copy would be lost.
func refuseLiveHosts(t *wtx) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT host_id, pid, start_marker, hostname, expires_at, stopped_at FROM hosts WHERE stopped_at IS NULL`)
	if err != nil {
		return t.db.codeError(t.ctx, err)
	}
	defer rows.Close()
	var live []string
	for rows.Next() {
		h, err := scanHost(rows)
		if err != nil {
			return t.db.codeError(t.ctx, err)
		}
		if t.db.hostAlive(h, t.now) {
			live = append(live, fmt.Sprintf("%s on %s pid %d", h.id, orUnknown(h.hostname), h.pid))
		}
	}
	if err := rows.Err(); err != nil {
		return t.db.codeError(t.ctx, err)
	}
	if len(live) > 0 {
		return demiurge.Errorf(demiurge.ECONFLICT,
			"runtime database %s is in use by %d live Host(s) (%s); stop them (serve, gateway, chat) before copying the ledger",
			t.db.path, len(live), strings.Join(live, ", "))
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown machine"
	}
	return s
}

// liteTable is one table of the SQLite ledger: its columns in order, and
// whether it has SQLite's implicit rowid (not a WITHOUT ROWID table).
type liteTable struct {
	name  string
	cols  []string
	rowid bool
}

// sqliteTables lists the ledger's tables in t, by name.
func sqliteTables(t *wtx) ([]liteTable, error) {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT name, wr FROM pragma_table_list
  WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var tables []liteTable
	for rows.Next() {
		var lt liteTable
		var withoutRowid bool
		if err := rows.Scan(&lt.name, &withoutRowid); err != nil {
			rows.Close()
			return nil, err
		}
		lt.rowid = !withoutRowid
		tables = append(tables, lt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range tables {
		cols, err := queryStrings(t.ctx, t.tx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, tables[i].name)
		if err != nil {
			return nil, err
		}
		tables[i].cols = cols
	}
	return tables, nil
}

// queryStrings runs q and returns its one text column.
func queryStrings(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	return scanStrings(tx.QueryContext(ctx, q, args...))
}

// scanStrings reads the one text column of rows (err: the query's).
func scanStrings(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// sqliteIdent quotes name as an SQLite identifier.
func sqliteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// copyPlan is how one table is copied: the PostgreSQL columns written and,
// in the same order, what is selected from SQLite for each.
type copyPlan struct {
	table   string
	pgCols  []string
	selects []string
	order   string // ORDER BY of the SQLite read: insertion order where there is one
}

// planCopy matches an SQLite table to its PostgreSQL twin (pgCols in
// ordinal order). PostgreSQL's rowid column takes SQLite's implicit rowid,
// or is left to its identity default for a WITHOUT ROWID table. Any other
// difference is a defect of the two schemas (TestPostgresSchemaMatchesSQLite
// keeps them equal) and fails the copy.
func planCopy(lt liteTable, pgCols []string) (copyPlan, error) {
	p := copyPlan{table: lt.name}
	if lt.rowid {
		p.order = " ORDER BY rowid"
	}
	for _, c := range pgCols {
		switch {
		case slices.Contains(lt.cols, c):
			p.pgCols, p.selects = append(p.pgCols, c), append(p.selects, sqliteIdent(c))
		case c == "rowid" && lt.rowid:
			p.pgCols, p.selects = append(p.pgCols, c), append(p.selects, "rowid")
		case c == "rowid":
		default:
			return p, fmt.Errorf("column %s.%s is in the PostgreSQL schema only", lt.name, c)
		}
	}
	for _, c := range lt.cols {
		if !slices.Contains(pgCols, c) {
			return p, fmt.Errorf("column %s.%s is in the SQLite schema only", lt.name, c)
		}
	}
	return p, nil
}

// sqliteSelect is the SQLite read of p.
func (p copyPlan) sqliteSelect() string {
	return "SELECT " + strings.Join(p.selects, ", ") + " FROM " + sqliteIdent(p.table) + p.order
}

// sqliteCount is the row count of table in the SQLite transaction t.
func sqliteCount(t *wtx, table string) (int64, error) {
	var n int64
	err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM "+sqliteIdent(table)).Scan(&n)
	return n, err
}
