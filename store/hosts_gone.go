package store

import "context"

// sqlHostsNotStopped reads what liveness needs (scanHost) of every Host
// that has not stopped: the candidates of AnyHostGone and of
// reconciliation's liveHosts.
const sqlHostsNotStopped = `SELECT host_id, pid, start_marker, hostname, expires_at, stopped_at FROM hosts WHERE stopped_at IS NULL`

// AnyHostGone reports whether a registered Host other than selfHostID is
// gone without having stopped (its process on this machine died, or its
// lease expired): a read, so a live Host may ask every second and run the
// write of Reconcile only when there is something to reconcile.
func (db *DB) AnyHostGone(ctx context.Context, selfHostID string) (bool, error) {
	rows, err := db.reader.QueryContext(ctx, sqlHostsNotStopped)
	if err != nil {
		return false, db.codeError(ctx, err)
	}
	defer rows.Close()
	now := db.now().UTC()
	for rows.Next() {
		h, err := scanHost(rows)
		if err != nil {
			return false, db.codeError(ctx, err)
		}
		if h.id != selfHostID && !db.hostAlive(h, now) {
			return true, nil
		}
	}
	return false, db.codeError(ctx, rows.Err())
}
