package store

// Seams for the external tests.

// OpenedWith is what db was opened with: the file path, or the whole
// postgres:// URL (search_path included), which Path does not print.
func (db *DB) OpenedWith() string { return db.source }

// PostgresSQL is a statement as the dialect runs it on PostgreSQL.
func PostgresSQL(q string) string { return toPostgres(q) }

// WriteStatements is how many statements the writer's connection holds
// prepared.
func WriteStatements(db *DB) int {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	return len(db.stmts)
}
