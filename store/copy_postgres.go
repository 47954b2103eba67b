package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/demiurge/demiurge"
)

// The PostgreSQL side of CopyLedger: one transaction on a connection of
// its own (pgx's COPY protocol, which database/sql does not reach).

// pgTable is one table of the PostgreSQL ledger: its columns in ordinal
// order and which of them are identity columns.
type pgTable struct {
	cols     []string
	identity []string
}

// copyToPostgres copies tables, read in the SQLite transaction t, into
// dst's ledger in one transaction and commits it once every count matched.
func copyToPostgres(ctx context.Context, t *wtx, tables []liteTable, dst *DB) ([]TableCount, error) {
	cfg, err := pgx.ParseConfig(dst.source)
	if err != nil {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "runtime database URL %s is not valid: %s", dst.path, pgReason(err))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, pgConnectError(dst.path, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, dst.codeError(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, sqlWriteLock); err != nil {
		return nil, dst.codeError(ctx, err)
	}
	pgTables, err := readPGTables(ctx, tx)
	if err != nil {
		return nil, dst.codeError(ctx, err)
	}
	plans, err := planCopies(tables, pgTables)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err,
			"the schemas of %s and %s differ", t.db.path, dst.path)
	}
	if err := refuseNonEmpty(ctx, tx, plans, dst.path); err != nil {
		return nil, err
	}
	counts := make([]TableCount, 0, len(plans))
	for _, p := range plans {
		n, err := copyTable(ctx, t, tx, p)
		if err != nil {
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "copy table %s into %s failed", p.table, dst.path)
		}
		counts = append(counts, TableCount{Table: p.table, Rows: n})
	}
	for _, p := range plans {
		if err := advanceIdentities(ctx, tx, p.table, pgTables[p.table].identity); err != nil {
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "advance the identity columns of %s in %s failed", p.table, dst.path)
		}
	}
	if err := verifyCounts(ctx, t, tx, counts, dst.path); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, dst.codeError(ctx, err)
	}
	return counts, nil
}

// readPGTables reads the ledger's tables in the current schema, all but
// demiurge_schema (the header, which Open wrote).
func readPGTables(ctx context.Context, tx pgx.Tx) (map[string]pgTable, error) {
	rows, err := tx.Query(ctx, `SELECT c.table_name::text, c.column_name::text, c.is_identity = 'YES'
  FROM information_schema.columns c
  JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
  WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'demiurge_schema'
  ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]pgTable{}
	for rows.Next() {
		var table, col string
		var identity bool
		if err := rows.Scan(&table, &col, &identity); err != nil {
			return nil, err
		}
		pt := out[table]
		pt.cols = append(pt.cols, col)
		if identity {
			pt.identity = append(pt.identity, col)
		}
		out[table] = pt
	}
	return out, rows.Err()
}

// planCopies plans every table; both sides must have the same tables.
func planCopies(tables []liteTable, pgTables map[string]pgTable) ([]copyPlan, error) {
	plans := make([]copyPlan, 0, len(tables))
	for _, lt := range tables {
		pt, ok := pgTables[lt.name]
		if !ok {
			return nil, fmt.Errorf("table %s is in the SQLite schema only", lt.name)
		}
		p, err := planCopy(lt, pt.cols)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	for name := range pgTables {
		if !slices.ContainsFunc(tables, func(lt liteTable) bool { return lt.name == name }) {
			return nil, fmt.Errorf("table %s is in the PostgreSQL schema only", name)
		}
	}
	return plans, nil
}

// refuseNonEmpty fails with ECONFIG when any table of the target holds a
// row: a copy never merges two ledgers.
func refuseNonEmpty(ctx context.Context, tx pgx.Tx, plans []copyPlan, name string) error {
	for _, p := range plans {
		var found bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{p.table}.Sanitize()+")").Scan(&found); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "read table %s of %s failed", p.table, name)
		}
		if found {
			return demiurge.Errorf(demiurge.ECONFIG,
				"runtime database %s is not empty (table %s has rows); a ledger is copied only into an empty database or schema", name, p.table)
		}
	}
	return nil
}

// copyTable streams the rows of one SQLite table into PostgreSQL with
// COPY and returns how many it wrote.
func copyTable(ctx context.Context, t *wtx, tx pgx.Tx, p copyPlan) (int64, error) {
	rows, err := t.tx.QueryContext(t.ctx, p.sqliteSelect())
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	width := len(p.selects)
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if !rows.Next() {
			return nil, rows.Err()
		}
		vals := make([]any, width)
		ptrs := make([]any, width)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		return vals, nil
	})
	return tx.CopyFrom(ctx, pgx.Identifier{p.table}, p.pgCols, src)
}

// advanceIdentities sets the sequence of each identity column of table
// to the largest value the copy wrote, so that the next generated value
// follows it (an explicit value does not advance a sequence).
func advanceIdentities(ctx context.Context, tx pgx.Tx, table string, cols []string) error {
	for _, c := range cols {
		_, err := tx.Exec(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(%s) AS m FROM %s) x WHERE m IS NOT NULL`,
			pgx.Identifier{c}.Sanitize(), pgx.Identifier{table}.Sanitize()), pgx.Identifier{table}.Sanitize(), c)
		if err != nil {
			return err
		}
	}
	return nil
}

// verifyCounts compares, for every table, the rows copied with the rows
// of the SQLite table (in the transaction the copy read) and of the
// PostgreSQL table (in the transaction that wrote them).
func verifyCounts(ctx context.Context, t *wtx, tx pgx.Tx, counts []TableCount, name string) error {
	for _, c := range counts {
		lite, err := sqliteCount(t, c.Table)
		if err != nil {
			return t.db.codeError(t.ctx, err)
		}
		var pg int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{c.Table}.Sanitize()).Scan(&pg); err != nil {
			return demiurge.WrapError(demiurge.EINTERNAL, err, "count table %s of %s failed", c.Table, name)
		}
		if lite != c.Rows || pg != c.Rows {
			return demiurge.Errorf(demiurge.EINTERNAL,
				"copy of table %s into %s does not verify: %d rows in SQLite, %d copied, %d in PostgreSQL; nothing was committed",
				c.Table, name, lite, c.Rows, pg)
		}
	}
	return nil
}
