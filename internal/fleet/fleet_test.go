package fleet_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/fleet"
	"github.com/demiurge/demiurge/store"
)

func TestMain(m *testing.M) {
	if code, ok := fleet.RunChild(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// startHost starts a fleet Host standing for machine on the ledger at url;
// maxActive > 0 bounds the tasks it runs at once.
func startHost(t *testing.T, url, machine string, maxActive int) *fleet.Proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := fleet.Start(fleet.Command(exe, url, machine, filepath.Join(t.TempDir(), "home"), maxActive), 60*time.Second)
	if err != nil {
		t.Fatalf("start host %s: %v", machine, err)
	}
	t.Cleanup(func() { p.Stop(30 * time.Second) })
	return p
}

// ledger opens a plain connection to the ledger for the test's own reads.
func ledger(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// waitFor polls cond every 20 ms until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// Three Hosts on one PostgreSQL ledger: 3,000 tasks queued across them all
// run exactly once, and every Host takes a share.
func TestFleetRunsEveryTaskOnce(t *testing.T) {
	url := demiurgetest.PostgresDatabase(t)
	hosts := []*fleet.Proc{startHost(t, url, "machine-a", 0), startHost(t, url, "machine-b", 0), startHost(t, url, "machine-c", 0)}
	db := ledger(t, url)
	const perHost = 1000
	start := time.Now()
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		go func() { errs <- h.Enqueue(perHost, 0, 2*time.Minute) }()
	}
	for range hosts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	total := perHost * len(hosts)
	t.Logf("%d tasks queued in %s", total, time.Since(start).Round(time.Millisecond))
	waitFor(t, 3*time.Minute, "every task succeeded", func() bool {
		return count(t, db, `SELECT count(*) FROM tasks WHERE status = 'succeeded'`) == total
	})
	t.Logf("%d tasks from submission to succeeded in %s", total, time.Since(start).Round(time.Millisecond))
	if n := count(t, db, `SELECT count(*) FROM tasks`); n != total {
		t.Fatalf("%d tasks in the ledger, want %d", n, total)
	}
	if n := count(t, db, `SELECT count(*) FROM runtime_events WHERE type = 'task.started'`); n != total {
		t.Fatalf("%d task.started events for %d tasks: a task ran twice or not at all", n, total)
	}
	if n := count(t, db, `SELECT count(*) FROM runtime_events WHERE type = 'task.succeeded'`); n != total {
		t.Fatalf("%d task.succeeded events for %d tasks", n, total)
	}
	for _, h := range hosts {
		if n := count(t, db, `SELECT count(*) FROM tasks WHERE host_id = $1`, h.HostID); n == 0 {
			t.Errorf("host %s ran no task", h.HostID)
		}
	}
}

// A Host killed mid-task: its running task ends lost and is never run
// again, and the queued task it had claimed is taken by another Host
// within the lease expiry.
func TestFleetKilledHostFailsOver(t *testing.T) {
	ctx := context.Background()
	url := demiurgetest.PostgresDatabase(t)
	db := ledger(t, url)
	// Host a runs one task at a time, so the claim below stays its own.
	a := startHost(t, url, "machine-a", 1)
	if err := a.Enqueue(1, 600_000, time.Minute); err != nil {
		t.Fatal(err)
	}
	var held string
	waitFor(t, 30*time.Second, "the long task running on host a", func() bool {
		return db.QueryRow(`SELECT task_id FROM tasks WHERE status = 'running' AND host_id = $1`, a.HostID).Scan(&held) == nil
	})
	// A task host a has claimed and not started yet, its claim good for
	// an hour: a crash between a claim and its start.
	client := demiurgetest.MustOpenPath(t, url, store.Options{})
	claimed := "task_claimed_by_a"
	if _, err := client.Append(ctx, []demiurge.Event{demiurge.NewEvent(demiurge.AggTask, claimed,
		demiurge.TaskSubmittedPayload{Kind: demiurge.TaskKindTerminalExec, Status: demiurge.TaskQueued, Action: map[string]any{}})}, "", nil); err != nil {
		t.Fatal(err)
	}
	if ids, err := client.ClaimQueuedTasks(ctx, a.HostID, true, []string{demiurge.TaskKindTerminalExec}, 1, time.Hour); err != nil || len(ids) != 1 || ids[0] != claimed {
		t.Fatalf("claim in host a's name: %v, %v", ids, err)
	}
	b, c := startHost(t, url, "machine-b", 0), startHost(t, url, "machine-c", 0)

	if err := a.Kill(); err == nil {
		t.Fatal("host a exited cleanly after SIGKILL")
	}
	failover := waitFor(t, 30*time.Second, "failover", func() bool {
		return count(t, db, `SELECT count(*) FROM tasks WHERE task_id = $1 AND status = 'lost'`, held) == 1 &&
			count(t, db, `SELECT count(*) FROM tasks WHERE task_id = $1 AND status = 'succeeded'`, claimed) == 1
	})
	t.Logf("failover %s after SIGKILL", failover.Round(time.Millisecond))
	if failover > 10*time.Second {
		t.Errorf("failover took %s, want within 10 s", failover)
	}
	if n := count(t, db, `SELECT count(*) FROM runtime_events WHERE type = 'task.started' AND aggregate_id = $1`, held); n != 1 {
		t.Fatalf("the lost task was started %d times", n)
	}
	var ranOn string
	if err := db.QueryRow(`SELECT host_id FROM tasks WHERE task_id = $1`, claimed).Scan(&ranOn); err != nil || (ranOn != b.HostID && ranOn != c.HostID) {
		t.Fatalf("the claimed task ran on %q (%v), want host b or c", ranOn, err)
	}
}
