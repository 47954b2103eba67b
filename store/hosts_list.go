package store

import (
	"context"
	"strings"
	"time"
)

// The operator's view of the hosts table: which Hosts share the ledger
// (doctor), and on which machine a Host ran (tasks list).

// HostLease is one registered Host that has not stopped, as the operator
// sees it. Live is the verdict reconciliation would reach now: a Host
// past its lease whose process on this machine still runs is live, one
// whose process here is gone is not, whatever its lease says.
type HostLease struct {
	HostID      string
	PID         int
	Hostname    string
	StartedAt   time.Time
	HeartbeatAt time.Time // the lease's last renewal
	ExpiresAt   time.Time
	Live        bool
}

// HostRegistry is the hosts table in brief: the Hosts that have not
// stopped (live or gone), newest heartbeat first, and how many rows of
// stopped Hosts are kept (for a day, see hostRetention).
type HostRegistry struct {
	Running []HostLease
	Stopped int
}

// Live returns the live Hosts of r.Running.
func (r HostRegistry) Live() []HostLease {
	var out []HostLease
	for _, h := range r.Running {
		if h.Live {
			out = append(out, h)
		}
	}
	return out
}

// DefaultHostLimit and MaxHostLimit bound ListHosts.
const (
	DefaultHostLimit = 100
	MaxHostLimit     = 1000
)

const sqlHostsRunning = `SELECT host_id, pid, start_marker, hostname, started_at, heartbeat_at, expires_at
  FROM hosts WHERE stopped_at IS NULL ORDER BY heartbeat_at DESC, host_id DESC LIMIT ?`

// ListHosts reads the registry: at most limit Hosts that have not
// stopped (default DefaultHostLimit, at most MaxHostLimit), each judged
// live or gone at the DB's clock, and the count of stopped ones.
func (db *DB) ListHosts(ctx context.Context, limit int) (HostRegistry, error) {
	var reg HostRegistry
	rows, err := db.reader.QueryContext(ctx, sqlHostsRunning, clampLimit(limit, DefaultHostLimit, MaxHostLimit))
	if err != nil {
		return reg, db.codeError(ctx, err)
	}
	defer rows.Close()
	now := db.now()
	for rows.Next() {
		var h HostLease
		var marker, hostname, started, heartbeat, expires ns
		if err := rows.Scan(&h.HostID, &h.PID, &marker, &hostname, &started, &heartbeat, &expires); err != nil {
			return reg, db.codeError(ctx, err)
		}
		h.Hostname = hostname.String
		h.StartedAt, h.HeartbeatAt, h.ExpiresAt = parseTime(started), parseTime(heartbeat), parseTime(expires)
		h.Live = db.hostAlive(hostRow{id: h.HostID, marker: marker.String, hostname: h.Hostname, pid: h.PID, expires: expires}, now)
		reg.Running = append(reg.Running, h)
	}
	if err := rows.Err(); err != nil {
		return reg, db.codeError(ctx, err)
	}
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM hosts WHERE stopped_at IS NOT NULL`).Scan(&reg.Stopped); err != nil {
		return reg, db.codeError(ctx, err)
	}
	return reg, nil
}

// HostNames returns the hostname of each of ids the hosts table still
// knows (rows of stopped Hosts are kept for a day); ids it does not know,
// or that registered no hostname, are absent. At most MaxHostLimit ids are
// looked up; "" and repeated ids are skipped.
func (db *DB) HostNames(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	var args []any
	seen := map[string]bool{}
	for _, id := range ids {
		if id != "" && !seen[id] && len(args) < MaxHostLimit {
			seen[id] = true
			args = append(args, id)
		}
	}
	if len(args) == 0 {
		return out, nil
	}
	q := `SELECT host_id, hostname FROM hosts WHERE hostname IS NOT NULL AND host_id IN (?` + strings.Repeat(", ?", len(args)-1) + `)`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, db.codeError(ctx, err)
		}
		out[id] = name
	}
	return out, db.codeError(ctx, rows.Err())
}
