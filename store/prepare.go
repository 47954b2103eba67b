package store

import (
	"context"
)

// turnEndStatements are the statements of a turn's last write transaction
// that a process may not have run yet: the projection of the turn's
// messages and usage, of a delivery sent within the turn and its work
// item, of its terminal event behind its expected-sequence check, the
// release of its session lease, and then the stop of a one-shot Host.
// TestPrepareTurnEndCoversATurnEnd ends a turn after PrepareTurnEnd and
// fails if the end prepares one more.
var turnEndStatements = []string{
	sqlInsertEvent, sqlEventsByKey, sqlLastSeq,
	sqlMessageInsert, sqlSessionAfterMessage, sqlStepUsage,
	sqlDeliveryQueue, sqlDeliveryUpdate, sqlWorkEnqueue, sqlWorkUpdate,
	sqlTurnFinish, sqlLeaseRelease, sqlHostStop,
}

// PrepareTurnEnd prepares on the writer's connection the statements of a
// turn's end transaction (turnEndStatements), so that the first turn a
// process ends runs them at once: a turn calls it while its model works.
// It takes the writer for one statement at a time, so a write waiting for
// it waits for one preparation at most; once they are all kept, it takes
// nothing (until the writer connection is replaced). On PostgreSQL it does
// nothing: the server plans there.
func (db *DB) PrepareTurnEnd(ctx context.Context) error {
	if db.dialect.engine != SQLite || db.turnEndKept.Load() {
		return nil
	}
	for _, q := range turnEndStatements {
		if err := db.prepareWrite(ctx, q); err != nil {
			return err
		}
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	for _, q := range turnEndStatements {
		if _, ok := db.stmts[q]; !ok {
			return nil // past maxWriteStmts, or dropped with the connection meanwhile
		}
	}
	db.turnEndKept.Store(true)
	return nil
}

// prepareWrite keeps q prepared on the writer's connection.
func (db *DB) prepareWrite(ctx context.Context, q string) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if _, ok := db.stmts[q]; ok {
		return nil
	}
	if db.writesClosed {
		return db.closedError()
	}
	conn, err := db.writerConn(ctx)
	if err != nil {
		return db.codeError(ctx, err)
	}
	if _, _, err := db.keepStmt(ctx, conn, q); err != nil {
		db.dropWriterConn(err)
		return db.codeError(ctx, err)
	}
	return nil
}
