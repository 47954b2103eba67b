package store_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

func startHost(tb testing.TB, db *store.DB, info store.HostInfo) *store.Host {
	tb.Helper()
	if info.PID == 0 {
		info.PID = os.Getpid()
	}
	if info.StartMarker == "" && info.PID == os.Getpid() {
		info.StartMarker, _ = process.StartMarker(info.PID)
	}
	h, err := db.StartHost(context.Background(), info)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func startTurn(tb testing.TB, db *store.DB, turnID, hostID string) {
	tb.Helper()
	mustAppend(tb, db, "", ev(demiurge.AggTurn, turnID, demiurge.EvTurnStarted, map[string]any{
		"session_id": "session_1", "core_id": "assistant", "host_id": hostID}))
}

func turnStatus(tb testing.TB, db *store.DB, id string) demiurge.TurnStatus {
	tb.Helper()
	tr, err := db.Turn(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return tr.Status
}

// deadChild starts and reaps a real child process, returning its pid and
// the start marker it had.
func deadChild(tb testing.TB) (int, string) {
	tb.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	pid := cmd.Process.Pid
	marker, err := process.StartMarker(pid)
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return pid, marker
}

func TestHostLifecycle(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	h := startHost(t, db, store.HostInfo{})
	if demiurge.IDPrefix(h.ID()) != "host" {
		t.Fatalf("host id %q", h.ID())
	}
	var pid int
	var marker, stopped any
	r := rawDB(t, db.OpenedWith())
	if err := r.QueryRow(`SELECT pid, start_marker, stopped_at FROM hosts WHERE host_id = ?`, h.ID()).Scan(&pid, &marker, &stopped); err != nil {
		t.Fatal(err)
	}
	self, _ := process.StartMarker(os.Getpid())
	if pid != os.Getpid() || marker != self || stopped != nil {
		t.Fatalf("hosts row pid=%d marker=%v stopped=%v", pid, marker, stopped)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	if err := r.QueryRow(`SELECT stopped_at FROM hosts WHERE host_id = ?`, h.ID()).Scan(&stopped); err != nil || stopped == nil {
		t.Fatalf("stopped_at %v, %v", stopped, err)
	}
	evs, _ := db0Events(t, db, demiurge.AggHost, h.ID())
	if len(evs) != 2 || evs[0].Type != demiurge.EvHostStarted || evs[1].Type != demiurge.EvHostStopped {
		t.Fatalf("host events %v", ids(evs, func(e demiurge.Event) string { return e.Type }))
	}
}

// The heartbeat goroutine refreshes the lease from the DB clock.
func TestHostHeartbeatRefreshesLease(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for one heartbeat interval")
	}
	clock := newClock()
	db := demiurgetest.MustOpenDB(t, store.Options{Now: clock.Now})
	h := startHost(t, db, store.HostInfo{})
	clock.Advance(time.Hour)
	want := demiurge.FormatTime(clock.Now().Add(store.HostTTL))
	r := rawDB(t, db.OpenedWith())
	deadline := time.Now().Add(store.HostHeartbeatInterval + 5*time.Second)
	for {
		var expires string
		if err := r.QueryRow(`SELECT expires_at FROM hosts WHERE host_id = ?`, h.ID()).Scan(&expires); err != nil {
			t.Fatal(err)
		}
		if expires == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("expires_at %s, want %s after a heartbeat", expires, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReconcile: host A (this process, heartbeat running) has a running
// turn; host B stopped and host C (a dead process, lease still fresh) left
// turns, tasks, deliveries and leases behind; host D runs elsewhere with an
// expired lease; host E is this very process with an expired lease.
func TestReconcile(t *testing.T) {
	clock := newClock()
	path := demiurgetest.TestDatabase(t)
	db := demiurgetest.MustOpenPath(t, path, store.Options{Now: clock.Now})
	frozen := newClock() // a second handle whose clock stays behind
	stale := demiurgetest.MustOpenPath(t, path, store.Options{Now: frozen.Now})
	ctx := context.Background()

	a := startHost(t, db, store.HostInfo{})
	b := startHost(t, db, store.HostInfo{})
	pid, marker := deadChild(t)
	c := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker})
	d := startHost(t, stale, store.HostInfo{PID: 1, Hostname: "elsewhere.example"})
	e := startHost(t, stale, store.HostInfo{}) // this process, but its lease is stale

	for _, h := range []*store.Host{a, b, c, d, e} {
		startTurn(t, db, "turn_"+h.ID(), h.ID())
		mustAppend(t, db, "", ev(demiurge.AggTask, "task_"+h.ID(), demiurge.EvTaskSubmitted, map[string]any{
			"kind": "terminal.exec", "host_id": h.ID()}))
		mustAppend(t, db, "", ev(demiurge.AggDelivery, "delivery_"+h.ID(), demiurge.EvDeliveryQueued, map[string]any{
			"owner_turn_id": "turn_" + h.ID(), "channel": "cli"}),
			ev(demiurge.AggDelivery, "delivery_"+h.ID(), demiurge.EvDeliverySending, nil))
		rel, err := db.AcquireSessionLease(ctx, "session_"+h.ID(), "turn_"+h.ID(), h.ID())
		if err != nil {
			t.Fatal(err)
		}
		_ = rel
	}
	startTurn(t, db, "turn_legacy", "")
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_running_b", demiurge.EvTaskSubmitted, map[string]any{"kind": "agent.spawn"}),
		ev(demiurge.AggTask, "task_running_b", demiurge.EvTaskStarted, map[string]any{"host_id": b.ID()}))
	mustAppend(t, db, "", ev(demiurge.AggTask, "task_done_b", demiurge.EvTaskSubmitted, map[string]any{"kind": "agent.spawn", "host_id": b.ID()}),
		ev(demiurge.AggTask, "task_done_b", demiurge.EvTaskSucceeded, nil))
	// A delivery.send work item in sending for B's delivery, lease still live.
	enqueue(t, db, "delivery_"+b.ID(), demiurge.WorkKindDeliverySend)
	wc, _, _ := db.ClaimWork(ctx, "delivery_"+b.ID(), "b-worker", time.Hour)
	if _, err := db.TransitionWork(ctx, wc.ID, wc.ClaimID, demiurge.WorkSending, demiurge.WorkFields{}); err != nil {
		t.Fatal(err)
	}

	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute) // D's and E's leases (frozen clock) are now expired

	rep, err := db.Reconcile(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	gone := []*store.Host{b, c, d}
	alive := []*store.Host{a, e}
	for _, h := range gone {
		if got := turnStatus(t, db, "turn_"+h.ID()); got != demiurge.TurnLost {
			t.Fatalf("turn of gone host: %s", got)
		}
		if tk, _ := db.Task(ctx, "task_"+h.ID()); tk.Status != demiurge.TaskLost || tk.Error["message"] != store.LostTaskSummary {
			t.Fatalf("task of gone host: %+v", tk)
		}
		if dl, _ := db.Delivery(ctx, "delivery_"+h.ID()); dl.Status != demiurge.DeliveryUnknown {
			t.Fatalf("delivery of gone host: %s", dl.Status)
		}
	}
	for _, h := range alive {
		if got := turnStatus(t, db, "turn_"+h.ID()); got != demiurge.TurnRunning {
			t.Fatalf("turn of live host %s: %s", h.ID(), got)
		}
		if tk, _ := db.Task(ctx, "task_"+h.ID()); tk.Status != demiurge.TaskQueued {
			t.Fatalf("task of live host: %s", tk.Status)
		}
		if dl, _ := db.Delivery(ctx, "delivery_"+h.ID()); dl.Status != demiurge.DeliverySending {
			t.Fatalf("delivery of live host: %s", dl.Status)
		}
	}
	if got := turnStatus(t, db, "turn_legacy"); got != demiurge.TurnLost {
		t.Fatalf("legacy turn %s, want lost", got)
	}
	if tk, _ := db.Task(ctx, "task_running_b"); tk.Status != demiurge.TaskLost {
		t.Fatalf("task started by B: %s", tk.Status)
	}
	if tk, _ := db.Task(ctx, "task_done_b"); tk.Status != demiurge.TaskSucceeded {
		t.Fatalf("finished task touched: %s", tk.Status)
	}
	if w, _ := db.WorkItem(ctx, "delivery_"+b.ID()); w.Status != demiurge.WorkUnknown {
		t.Fatalf("delivery.send work of gone host: %s", w.Status)
	}
	for _, h := range []*store.Host{c, d} {
		evs, _ := db0Events(t, db, demiurge.AggHost, h.ID())
		if last := evs[len(evs)-1]; last.Type != demiurge.EvHostStopped || payloadOf(t, last)["reason"] != "gone" {
			t.Fatalf("vanished host %s not marked stopped: %+v", h.ID(), last)
		}
	}
	tr, _ := db.Turn(ctx, "turn_"+c.ID())
	if tr.Error["code"] != "lost" || tr.Error["message"] != store.LostTurnMessage {
		t.Fatalf("lost turn error %v", tr.Error)
	}

	if rep.TurnsLost != 4 || rep.TasksLost != 4 || rep.DeliveriesUnknown != 3 || rep.LeasesReleased != 3 || rep.GoneHosts != 2 {
		t.Fatalf("report %+v", rep)
	}
	wantTurns := []string{"turn_" + b.ID(), "turn_" + c.ID(), "turn_" + d.ID(), "turn_legacy"}
	slices.Sort(rep.LostTurnIDs)
	slices.Sort(wantTurns)
	if !slices.Equal(rep.LostTurnIDs, wantTurns) {
		t.Fatalf("lost turn ids %v, want %v", rep.LostTurnIDs, wantTurns)
	}
	for _, h := range gone {
		if _, err := db.AcquireSessionLease(ctx, "session_"+h.ID(), "new", a.ID()); err != nil {
			t.Fatalf("lease of gone host not released: %v", err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = db.AcquireSessionLease(short, "session_"+e.ID(), "new", a.ID())
	wantCode(t, err, demiurge.ETIMEOUT)

	// Reconciling again changes nothing.
	head := headSeq(t, db)
	rep2, err := db.Reconcile(ctx, a.ID())
	if err != nil || rep2.Changed() || headSeq(t, db) != head {
		t.Fatalf("second reconcile %+v, %v (appended: %v)", rep2, err, headSeq(t, db) != head)
	}
}

// A host whose process died is gone at once: no waiting for its lease.
func TestReconcileDeadProcessWithoutTTL(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	self := startHost(t, db, store.HostInfo{})
	pid, marker := deadChild(t)
	dead := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker}) // heartbeat keeps its lease fresh
	startTurn(t, db, "turn_dead", dead.ID())
	startTurn(t, db, "turn_self", self.ID())
	rep, err := db.Reconcile(ctx, self.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rep.TurnsLost != 1 || turnStatus(t, db, "turn_dead") != demiurge.TurnLost || turnStatus(t, db, "turn_self") != demiurge.TurnRunning {
		t.Fatalf("report %+v; dead %s self %s", rep, turnStatus(t, db, "turn_dead"), turnStatus(t, db, "turn_self"))
	}
	evs, _ := db.Events(ctx, demiurge.EventFilter{Type: demiurge.EvHostReconciled})
	if len(evs) != 1 || payloadOf(t, evs[0])["turns_lost"] != float64(1) {
		t.Fatalf("host.reconciled events %v", evs)
	}
}

// Two reconcilers at once append each lost marker exactly once.
func TestConcurrentReconcilers(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	db1 := demiurgetest.MustOpenPath(t, path, store.Options{})
	db2 := demiurgetest.MustOpenPath(t, path, store.Options{})
	ctx := context.Background()
	for i := range 20 {
		startTurn(t, db1, "turn_"+itoa(i), "")
	}
	var wg sync.WaitGroup
	reps := make([]store.ReconcileReport, 4)
	errs := make([]error, 4)
	for i := range reps {
		db := db1
		if i%2 == 1 {
			db = db2
		}
		wg.Go(func() { reps[i], errs[i] = db.Reconcile(ctx, "") })
	}
	wg.Wait()
	total := 0
	for i := range reps {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		total += reps[i].TurnsLost
	}
	evs, _ := db1.Events(ctx, demiurge.EventFilter{Type: demiurge.EvTurnLost, Limit: 1000})
	if total != 20 || len(evs) != 20 {
		t.Fatalf("turns lost reported %d, events %d; want 20 and 20", total, len(evs))
	}
}

func TestSessionLease(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	h := startHost(t, db, store.HostInfo{})
	h2 := startHost(t, db, store.HostInfo{}) // another live Host (same process stands in for it)

	release1, err := db.AcquireSessionLease(ctx, "session_1", "turn_1", h.ID())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var release2 func(context.Context) error
	go func() {
		var err error
		release2, err = db.AcquireSessionLease(ctx, "session_1", "turn_2", h2.ID())
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second holder acquired a held lease (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	// Another session is independent.
	other, err := db.AcquireSessionLease(ctx, "session_2", "turn_3", h.ID())
	if err != nil {
		t.Fatal(err)
	}
	if err := other(ctx); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := release1(cancelled); err != nil { // release works with a cancelled ctx
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lease after release")
	}
	// A stale release (turn_1 again) must not drop turn_2's lease.
	if err := release1(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel2()
	_, err = db.AcquireSessionLease(short, "session_1", "turn_4", h.ID())
	wantCode(t, err, demiurge.ETIMEOUT)
	cctx, cancel3 := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel3() }()
	_, err = db.AcquireSessionLease(cctx, "session_1", "turn_5", h.ID())
	wantCode(t, err, demiurge.ECANCELED)
	if err := release2(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = db.AcquireSessionLease(ctx, "", "x", "y")
	wantCode(t, err, demiurge.EINVALID)
}

// A lease held by a gone host is taken over without waiting.
func TestSessionLeaseTakeOverFromGoneHost(t *testing.T) {
	db := demiurgetest.MustOpenDB(t)
	ctx := context.Background()
	self := startHost(t, db, store.HostInfo{})
	pid, marker := deadChild(t)
	dead := startHost(t, db, store.HostInfo{PID: pid, StartMarker: marker})
	if _, err := db.AcquireSessionLease(ctx, "session_1", "turn_dead", dead.ID()); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	release, err := db.AcquireSessionLease(short, "session_1", "turn_new", self.ID())
	if err != nil {
		t.Fatalf("take over from a dead host: %v", err)
	}
	var holder string
	if err := rawDB(t, db.OpenedWith()).QueryRow(`SELECT holder FROM session_leases WHERE session_id = 'session_1'`).Scan(&holder); err != nil || holder != "turn_new" {
		t.Fatalf("holder %q, %v", holder, err)
	}
	if err := release(ctx); err != nil {
		t.Fatal(err)
	}
}

// DB.Close stops hosts still open and marks them stopped.
func TestCloseStopsHosts(t *testing.T) {
	path := demiurgetest.TestDatabase(t)
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.StartHost(context.Background(), store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var stopped any
	if err := rawDB(t, path).QueryRow(`SELECT stopped_at FROM hosts WHERE host_id = ?`, h.ID()).Scan(&stopped); err != nil || stopped == nil {
		t.Fatalf("stopped_at %v, %v", stopped, err)
	}
	if _, err := db.StartHost(context.Background(), store.HostInfo{}); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("StartHost on a closed DB: %v", err)
	}
}

// DB.CloseForExit does what Close does that outlives the process: its
// hosts are marked stopped and what was committed is there for the next
// opener, in this process too.
func TestCloseForExitStopsHostsAndKeepsTheData(t *testing.T) {
	ctx := context.Background()
	path := demiurgetest.TestDatabase(t)
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.StartHost(ctx, store.HostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, "", ev(demiurge.AggTurn, "turn_exit", demiurge.EvTurnStarted, map[string]any{
		"session_id": "session_1", "core_id": "assistant", "host_id": h.ID()}))
	if err := db.CloseForExit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartHost(ctx, store.HostInfo{}); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("StartHost after CloseForExit: %v", err)
	}
	// The connections are left open, and still no write gets through.
	late := ev(demiurge.AggTurn, "turn_late", demiurge.EvTurnStarted, map[string]any{"session_id": "session_1", "core_id": "assistant"})
	if _, err := db.Append(ctx, []demiurge.Event{late}, "", nil); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("Append after CloseForExit: %v", err)
	}
	var stopped any
	if err := rawDB(t, path).QueryRow(`SELECT stopped_at FROM hosts WHERE host_id = ?`, h.ID()).Scan(&stopped); err != nil || stopped == nil {
		t.Fatalf("stopped_at %v, %v", stopped, err)
	}
	next, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if got := turnStatus(t, next, "turn_exit"); got != demiurge.TurnRunning {
		t.Fatalf("turn status after reopening %q, want %q", got, demiurge.TurnRunning)
	}
}
