package store

// Seams for the external tests.

// OpenedWith is what db was opened with: the file path, or the whole
// postgres:// URL (search_path included), which Path does not print.
func (db *DB) OpenedWith() string { return db.source }

// PostgresSQL is a statement as the dialect runs it on PostgreSQL.
func PostgresSQL(q string) string { return toPostgres(q) }
