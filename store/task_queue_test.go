package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// queueTask appends task.submitted of a queued task; host "" queues it for
// any Host.
func queueTask(tb testing.TB, db *store.DB, id, kind, host string) {
	tb.Helper()
	p := map[string]any{"kind": kind}
	if host != "" {
		p["host_id"] = host
	}
	mustAppend(tb, db, "", ev(demiurge.AggTask, id, demiurge.EvTaskSubmitted, p))
}

func taskOf(tb testing.TB, db *store.DB, id string) demiurge.Task {
	tb.Helper()
	tk, err := db.Task(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

var execKinds = []string{demiurge.TaskKindTerminalExec}

// A Host claims the queued tasks of its kinds that are queued for any Host
// or for it, oldest first; a live claim keeps others off; starting a
// claimed task clears the claim; a lapsed claim is anyone's again.
func TestClaimQueuedTasks(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	queueTask(t, db, "task_1", demiurge.TaskKindTerminalExec, "")
	queueTask(t, db, "task_2", demiurge.TaskKindTerminalExec, "host_b")
	queueTask(t, db, "task_3", demiurge.TaskKindAgentSpawn, "")
	queueTask(t, db, "task_4", demiurge.TaskKindTerminalExec, "")

	ids, err := db.ClaimQueuedTasks(ctx, "host_a", true, execKinds, 10, time.Minute)
	if err != nil || !slices.Equal(ids, []string{"task_1", "task_4"}) {
		t.Fatalf("host_a claimed %v, %v; want task_1 and task_4 (task_2 is host_b's, task_3 another kind)", ids, err)
	}
	if again, err := db.ClaimQueuedTasks(ctx, "host_c", true, execKinds, 10, time.Minute); err != nil || len(again) != 0 {
		t.Fatalf("claimed under a live claim: %v, %v", again, err)
	}
	if tk := taskOf(t, db, "task_1"); tk.Status != demiurge.TaskQueued || tk.HostID != "" {
		t.Fatalf("a claim is not a start: %+v", tk)
	}

	started, err := db.StartClaimedTasks(ctx, "host_a", []string{"task_1", "task_2"})
	if err != nil || len(started) != 1 || started[0].Task.ID != "task_1" {
		t.Fatalf("started %+v, %v; want task_1 only (task_2 is not host_a's claim)", started, err)
	}
	if s := started[0]; s.Task.Status != demiurge.TaskRunning || s.Task.HostID != "host_a" || s.Seq <= 0 {
		t.Fatalf("started task %+v seq %d", s.Task, s.Seq)
	}

	// task_4's claim lapses: host_c takes it, and host_a can no longer start it.
	ids, err = db.ClaimQueuedTasks(ctx, "host_c", true, execKinds, 10, time.Nanosecond)
	if err != nil || len(ids) != 0 {
		t.Fatalf("claimed %v, %v before the lease lapsed", ids, err)
	}
	if err := db.ReleaseTaskClaims(ctx, "host_a", []string{"task_4"}); err != nil {
		t.Fatal(err)
	}
	ids, err = db.ClaimQueuedTasks(ctx, "host_c", true, execKinds, 10, time.Minute)
	if err != nil || !slices.Equal(ids, []string{"task_4"}) {
		t.Fatalf("host_c claimed %v, %v after host_a released task_4", ids, err)
	}
	if started, err := db.StartClaimedTasks(ctx, "host_a", []string{"task_4"}); err != nil || len(started) != 0 {
		t.Fatalf("host_a started a task host_c claims: %+v, %v", started, err)
	}

	// A cancelled task is never started, claimed or not.
	queueTask(t, db, "task_5", demiurge.TaskKindTerminalExec, "")
	if ids, _ := db.ClaimQueuedTasks(ctx, "host_a", true, execKinds, 10, time.Minute); !slices.Equal(ids, []string{"task_5"}) {
		t.Fatalf("claimed %v", ids)
	}
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_5", demiurge.EvTaskCancelled, nil))
	if started, err := db.StartClaimedTasks(ctx, "host_a", []string{"task_5"}); err != nil || len(started) != 0 {
		t.Fatalf("started a cancelled task: %+v, %v", started, err)
	}

	_, err = db.ClaimQueuedTasks(ctx, "", true, execKinds, 1, 0)
	wantCode(t, err, demiurge.EINVALID)
}

// A claim that lapses by time is taken by the next claimer.
func TestClaimQueuedTaskLeaseLapses(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	queueTask(t, db, "task_1", demiurge.TaskKindTerminalExec, "")
	if ids, _ := db.ClaimQueuedTasks(ctx, "host_a", true, execKinds, 1, 5*time.Second); len(ids) != 1 {
		t.Fatalf("claimed %v", ids)
	}
	clock.Advance(4 * time.Second)
	if ids, _ := db.ClaimQueuedTasks(ctx, "host_b", true, execKinds, 1, 5*time.Second); len(ids) != 0 {
		t.Fatalf("claimed %v under a live claim", ids)
	}
	clock.Advance(2 * time.Second)
	if ids, _ := db.ClaimQueuedTasks(ctx, "host_b", true, execKinds, 1, 5*time.Second); !slices.Equal(ids, []string{"task_1"}) {
		t.Fatalf("claimed %v after the claim lapsed", ids)
	}
}

// Two Hosts (two connections to one ledger) claiming and starting at once
// start every task exactly once.
func TestClaimQueuedTasksConcurrently(t *testing.T) {
	ctx := context.Background()
	where := demiurgetest.TestDatabase(t)
	dbs := []*store.DB{demiurgetest.MustOpenPath(t, where, store.Options{}), demiurgetest.MustOpenPath(t, where, store.Options{})}
	const n = 300
	batch := make([]demiurge.Event, 0, n)
	for i := range n {
		batch = append(batch, ev(demiurge.AggTask, fmt.Sprintf("task_%03d", i), demiurge.EvTaskSubmitted,
			map[string]any{"kind": demiurge.TaskKindTerminalExec}))
	}
	mustAppend(t, dbs[0], "", batch...)

	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for h, db := range dbs {
		for w := range 2 {
			host := fmt.Sprintf("host_%d", h)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					ids, err := db.ClaimQueuedTasks(ctx, host, true, execKinds, 7, time.Minute)
					if err != nil {
						t.Errorf("%s/%d claim: %v", host, w, err)
						return
					}
					if len(ids) == 0 {
						return
					}
					started, err := db.StartClaimedTasks(ctx, host, ids)
					if err != nil {
						t.Errorf("%s/%d start: %v", host, w, err)
						return
					}
					mu.Lock()
					for _, s := range started {
						if prev, dup := seen[s.Task.ID]; dup {
							t.Errorf("%s started by %s and %s", s.Task.ID, prev, host)
						}
						seen[s.Task.ID] = host
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d of %d tasks started", len(seen), n)
	}
	running, err := dbs[1].ListTasks(ctx, demiurge.TaskFilter{Status: demiurge.TaskRunning, Limit: demiurge.MaxTaskLimit})
	if err != nil || len(running) != n {
		t.Fatalf("%d running tasks, %v", len(running), err)
	}
}

// Reconciliation: the claims of a gone Host go back to the queue; a task
// queued for any Host is never lost; one queued for the gone Host alone is.
func TestReconcileReleasesClaimsOfGoneHost(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	a := startHost(t, db, store.HostInfo{})
	pid, marker := deadChild(t)
	gone := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker})

	queueTask(t, db, "task_claimed", demiurge.TaskKindTerminalExec, "")
	queueTask(t, db, "task_waiting", demiurge.TaskKindTerminalExec, "")
	queueTask(t, db, "task_pinned", demiurge.TaskKindTerminalExec, gone.ID())
	if ids, _ := db.ClaimQueuedTasks(ctx, gone.ID(), true, execKinds, 1, time.Hour); !slices.Equal(ids, []string{"task_claimed"}) {
		t.Fatalf("claimed %v", ids)
	}
	rep, err := db.Reconcile(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rep.ClaimsReleased != 1 || rep.TasksLost != 1 || !slices.Equal(rep.LostTaskIDs, []string{"task_pinned"}) {
		t.Fatalf("report %+v", rep)
	}
	for _, id := range []string{"task_claimed", "task_waiting"} {
		if tk := taskOf(t, db, id); tk.Status != demiurge.TaskQueued {
			t.Fatalf("%s: %s, want queued", id, tk.Status)
		}
	}
	if ids, _ := db.ClaimQueuedTasks(ctx, a.ID(), true, execKinds, 10, time.Minute); !slices.Equal(ids, []string{"task_claimed", "task_waiting"}) {
		t.Fatalf("after reconciliation host a claimed %v", ids)
	}
}

// A queued task wakes the subscribers of its topic; one submitted and
// started in one append wakes nobody. On PostgreSQL the wake-up crosses
// connections (LISTEN/NOTIFY).
func TestQueuedTaskWakesSubscribers(t *testing.T) {
	where := demiurgetest.TestDatabase(t)
	writer := demiurgetest.MustOpenPath(t, where, store.Options{})
	listener := writer
	if demiurgetest.Engine() == store.Postgres {
		listener = demiurgetest.MustOpenPath(t, where, store.Options{})
	}
	shared, stopAny := listener.Subscribe(demiurge.TopicTasks)
	defer stopAny()
	mine, stopMine := listener.Subscribe(demiurge.TopicHostTasks("host_b"))
	defer stopMine()
	drain := func(ch <-chan struct{}) {
		for {
			select {
			case <-ch:
			case <-time.After(300 * time.Millisecond):
				return
			}
		}
	}
	drain(shared) // the listener's connect wake-up
	drain(mine)

	mustAppend(t, writer, "", ev(demiurge.AggTask, "task_run", demiurge.EvTaskSubmitted, map[string]any{"kind": "terminal.exec"}),
		ev(demiurge.AggTask, "task_run", demiurge.EvTaskStarted, map[string]any{"host_id": "host_a"}))
	select {
	case <-shared:
		t.Fatal("a task started in its submitting append woke the queue")
	case <-time.After(500 * time.Millisecond):
	}
	queueTask(t, writer, "task_any", demiurge.TaskKindTerminalExec, "")
	select {
	case <-shared:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for a task queued for any Host")
	}
	queueTask(t, writer, "task_b", demiurge.TaskKindTerminalExec, "host_b")
	select {
	case <-mine:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for a task queued for host_b")
	}
}

// A claim of a Host's own queue only takes the tasks queued for that
// Host: the tasks queued for any Host stay for the Hosts that share work.
func TestClaimOwnQueueOnly(t *testing.T) {
	ctx := context.Background()
	db := demiurgetest.MustOpenDB(t)
	queueTask(t, db, "task_any", demiurge.TaskKindTerminalExec, "")
	queueTask(t, db, "task_mine", demiurge.TaskKindTerminalExec, "host_a")
	queueTask(t, db, "task_theirs", demiurge.TaskKindTerminalExec, "host_b")
	ids, err := db.ClaimQueuedTasks(ctx, "host_a", false, execKinds, 10, time.Minute)
	if err != nil || !slices.Equal(ids, []string{"task_mine"}) {
		t.Fatalf("own-queue claim = %v, %v; want [task_mine]", ids, err)
	}
	if ids, err := db.ClaimQueuedTasks(ctx, "host_a", false, execKinds, 10, time.Minute); err != nil || len(ids) != 0 {
		t.Fatalf("second own-queue claim = %v, %v; want nothing", ids, err)
	}
	ids, err = db.ClaimQueuedTasks(ctx, "host_c", true, execKinds, 10, time.Minute)
	if err != nil || !slices.Equal(ids, []string{"task_any"}) {
		t.Fatalf("shared claim by another Host = %v, %v; want [task_any]", ids, err)
	}
}
