package store

import "context"

// On SQLite the read pool's connections are opened read-only (mode=ro),
// and the pool, whose first connection is the one Open probed the file
// with, is closed after every other connection. That is for what SQLite
// does when the last connection to a WAL database closes: it checkpoints
// the log into the database, syncs both, and deletes the log, so that the
// next process to write creates and syncs a new one. That is four syncs of
// the disk for every short-lived process (a `demiurge run`), more than all
// its transactions cost. A connection opened read-only cannot checkpoint,
// so when read-only connections are the last to close the log stays as it
// is; the next process reads it back (its wal-index is rebuilt from it)
// and appends to it. Nothing is less durable: a commit is in the log
// either way, and the log is checkpointed into the database while it runs
// (checkpoint.go). The pool keeps its idle connections open for its whole
// life, so the probe's connection is still there when the writer closes.

// keep makes the read pool's open connection hold its shared lock on the
// database file, which a WAL-mode connection keeps between reads: the
// writer, closing while it is held, finds the database in use and leaves
// the log alone. It is called once the writer has put the file in WAL
// mode; a failure only costs the checkpoint at Close, so it is ignored.
func (db *DB) keep(ctx context.Context) {
	var v int
	_ = db.reader.DB.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
}
