package fleet

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of the ledger reads

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
)

// NewLedger creates an empty schema in the PostgreSQL database base names
// and returns the URL of a ledger in it, with drop to remove it.
func NewLedger(ctx context.Context, base string) (where string, drop func(), err error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "fleet_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, demiurge.WrapError(demiurge.EUNAVAILABLE, err, "create schema in %s", store.DescribeURL(base))
	}
	drop = func() {
		admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// fleetOf starts n Hosts (machines m0, m1, …) of exe on the ledger at
// where, homes under dir; stop ends them all.
func fleetOf(exe, where, dir string, n, maxActive int) (procs []*Proc, stop func(), err error) {
	stop = func() {
		for _, p := range procs {
			p.Stop(30 * time.Second)
		}
	}
	for i := range n {
		machine := fmt.Sprintf("m%d", i)
		p, err := Start(Command(exe, where, machine, filepath.Join(dir, machine), maxActive), 60*time.Second)
		if err != nil {
			stop()
			return nil, nil, err
		}
		procs = append(procs, p)
	}
	return procs, stop, nil
}

// count runs a count query on the ledger.
func count(ctx context.Context, db *sql.DB, q string, args ...any) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

// waitCount polls q every 10 ms until it reaches want, and returns when.
func waitCount(ctx context.Context, db *sql.DB, want int, within time.Duration, q string, args ...any) (time.Time, error) {
	return waitCountEvery(ctx, db, want, within, 10*time.Millisecond, q, args...)
}

// waitCountEvery is waitCount polling every period.
func waitCountEvery(ctx context.Context, db *sql.DB, want int, within, period time.Duration, q string, args ...any) (time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		n, err := count(ctx, db, q, args...)
		if err != nil {
			return time.Time{}, err
		}
		if n >= want {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("fleet: %d of %d after %s (%s)", n, want, within, q)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(period):
		}
	}
}

// MeasureThroughput starts hosts Hosts of exe on a new ledger in the
// database base names, has each queue perHost trivial tasks for any Host
// at once, and returns the tasks per second from the first submission to
// the last task succeeded.
func MeasureThroughput(ctx context.Context, exe, base, dir string, hosts, perHost int) (float64, error) {
	where, drop, err := NewLedger(ctx, base)
	if err != nil {
		return 0, err
	}
	defer drop()
	procs, stop, err := fleetOf(exe, where, dir, hosts, 0)
	if err != nil {
		return 0, err
	}
	defer stop()
	db, err := sql.Open("pgx", where)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	start := time.Now()
	errs := make(chan error, len(procs))
	for _, p := range procs {
		go func() { errs <- p.Enqueue(perHost, 0, 5*time.Minute) }()
	}
	for range procs {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	total := hosts * perHost
	// A slow poll, so the measurement takes little from the machine it
	// measures; the end is the last task's own completion time.
	if _, err := waitCountEvery(ctx, db, total, 5*time.Minute, 100*time.Millisecond, `SELECT count(*) FROM tasks WHERE status = 'succeeded'`); err != nil {
		return 0, err
	}
	var last string
	if err := db.QueryRowContext(ctx, `SELECT max(completed_at) FROM tasks`).Scan(&last); err != nil {
		return 0, err
	}
	end := demiurge.ParseTime(last)
	if n, err := count(ctx, db, `SELECT count(*) FROM runtime_events WHERE type = 'task.started'`); err != nil || n != total {
		return 0, fmt.Errorf("fleet: %d task.started events for %d tasks (%v)", n, total, err)
	}
	return float64(total) / end.Sub(start).Seconds(), nil
}

// MeasureFailover starts three Hosts on a new ledger; the first runs a
// long task and holds a claim on a queued one; it is SIGKILLed, and the
// result is the time until its task is lost and the claimed task has run
// on another Host (the Hosts stand for machines of their own, so the lease
// expiry is part of it).
func MeasureFailover(ctx context.Context, exe, base, dir string) (time.Duration, error) {
	where, drop, err := NewLedger(ctx, base)
	if err != nil {
		return 0, err
	}
	defer drop()
	a, stopA, err := fleetOf(exe, where, filepath.Join(dir, "a"), 1, 1)
	if err != nil {
		return 0, err
	}
	defer stopA()
	db, err := sql.Open("pgx", where)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if err := a[0].Enqueue(1, 600_000, time.Minute); err != nil {
		return 0, err
	}
	if _, err := waitCount(ctx, db, 1, time.Minute, `SELECT count(*) FROM tasks WHERE status = 'running'`); err != nil {
		return 0, err
	}
	client, err := store.Open(ctx, where, store.Options{})
	if err != nil {
		return 0, err
	}
	defer client.Close()
	const claimed = "task_claimed_by_the_killed_host"
	if _, err := client.Append(ctx, []demiurge.Event{demiurge.NewEvent(demiurge.AggTask, claimed,
		demiurge.TaskSubmittedPayload{Kind: demiurge.TaskKindTerminalExec, Status: demiurge.TaskQueued, Action: map[string]any{}})}, "", nil); err != nil {
		return 0, err
	}
	if ids, err := client.ClaimQueuedTasks(ctx, a[0].HostID, true, []string{demiurge.TaskKindTerminalExec}, 1, time.Hour); err != nil || len(ids) != 1 {
		return 0, fmt.Errorf("fleet: claim in the first host's name: %v, %v", ids, err)
	}
	_, stop, err := fleetOf(exe, where, filepath.Join(dir, "bc"), 2, 0)
	if err != nil {
		return 0, err
	}
	defer stop()
	killed := time.Now()
	a[0].Kill()
	if _, err := waitCount(ctx, db, 1, time.Minute, `SELECT count(*) FROM tasks WHERE status = 'lost'`); err != nil {
		return 0, err
	}
	end, err := waitCount(ctx, db, 1, time.Minute, `SELECT count(*) FROM tasks WHERE task_id = $1 AND status = 'succeeded'`, claimed)
	if err != nil {
		return 0, err
	}
	return end.Sub(killed), nil
}
