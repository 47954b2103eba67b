package controlplane_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/store"
)

// recorder collects delivered completions; fail makes the first n calls
// fail.
type recorder struct {
	mu   sync.Mutex // guards got, fail
	got  []controlplane.Completion
	fail int
	ch   chan controlplane.Completion
}

func newRecorder() *recorder { return &recorder{ch: make(chan controlplane.Completion, 100)} }

func (rc *recorder) fn(ctx context.Context, c controlplane.Completion) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.fail > 0 {
		rc.fail--
		return errors.New("session busy")
	}
	rc.got = append(rc.got, c)
	rc.ch <- c
	return nil
}

func (rc *recorder) next(t *testing.T) controlplane.Completion {
	t.Helper()
	select {
	case c := <-rc.ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no completion delivered")
		return controlplane.Completion{}
	}
}

func workStatus(t *testing.T, db *store.DB, id string) demiurge.WorkItem {
	t.Helper()
	w, err := db.WorkItem(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A task's end is delivered to OnCompletion once, with the payload of the
// spec, and acknowledged; silent and unowned tasks get none.
func TestCompletionDelivered(t *testing.T) {
	rc := newRecorder()
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, rc.fn)
	tk := r.run(t, "ok", map[string]any{"owner_turn_id": "turn_1", "source_tool": "terminal",
		"metadata": map[string]any{"cwd": "/work"}})
	c := rc.next(t)
	if c.TaskID != tk.ID || c.SessionID != "session_1" || c.Task.Status != demiurge.TaskSucceeded || c.Summary != "all done" || c.ClaimID == "" {
		t.Fatalf("completion %+v", c)
	}
	p := c.Payload
	meta, _ := p["metadata"].(map[string]any)
	if p["source_tool"] != "terminal" || p["owner_turn_id"] != "turn_1" || p["result_ref"] != "ref://out" ||
		meta["cwd"] != "/work" || meta["exit_code"] != float64(0) || p["status"] != demiurge.TaskSucceeded {
		t.Fatalf("payload %v", p)
	}
	eventually(t, 2*time.Second, "acknowledgement", func() bool {
		return workStatus(t, r.db, c.WorkID).Status == demiurge.WorkAcknowledged
	})
	acks := events(t, r.db, demiurge.AggTaskCompletion, c.WorkID, demiurge.EvTaskCompletionAcknowledged)
	if len(acks) != 1 {
		t.Fatalf("%d acknowledgements", len(acks))
	}

	silent := r.wait(t, r.run(t, "ok", map[string]any{"notify_policy": "silent"}).ID)
	unowned := r.wait(t, r.run(t, "ok", map[string]any{"owner_session_id": ""}).ID)
	for _, id := range []string{silent.ID, unowned.ID} {
		if n := len(completions(t, r.db, id)); n != 0 {
			t.Fatalf("task %s got %d completions", id, n)
		}
	}
}

// A failing handler is retried with backoff; the claim is released in
// between, and the second attempt acknowledges.
func TestCompletionRetried(t *testing.T) {
	rc := newRecorder()
	rc.fail = 1
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, rc.fn)
	tk := r.run(t, "fail", nil)
	var workID string
	eventually(t, 2*time.Second, "a scheduled retry", func() bool {
		rows := completions(t, r.db, tk.ID)
		if len(rows) == 0 {
			return false
		}
		workID = rows[0]["work_id"].(string)
		return workStatus(t, r.db, workID).Status == demiurge.WorkRetryScheduled
	})
	if w := workStatus(t, r.db, workID); w.LastError != "internal error" || w.NextAttemptAt.IsZero() {
		t.Fatalf("retry %+v", w)
	}
	c := rc.next(t)
	if c.WorkID != workID || c.Task.Status != demiurge.TaskFailed {
		t.Fatalf("retried completion %+v", c)
	}
	eventually(t, 2*time.Second, "acknowledgement", func() bool {
		w := workStatus(t, r.db, workID)
		return w.Status == demiurge.WorkAcknowledged && w.Attempts == 2
	})
}

// After a restart, a new worker delivers what the old one left: a pending
// completion (no handler ran), a terminal task whose completion was never
// written (a crash in between), and a task lost by reconciliation.
func TestCompletionsRebuiltAfterRestart(t *testing.T) {
	path := dbPath(t)
	ctx := context.Background()
	old := newRig(t, path, controlplane.WorkerOptions{}, nil) // no handler: completions stay pending
	pending := old.wait(t, old.run(t, "ok", nil).ID)
	// Ended outside any worker: no completion written.
	crashed, err := old.cp.SubmitTask(ctx, demiurge.TaskSpec{Kind: demiurge.TaskKindEvolverRun,
		Payload: map[string]any{"owner_session_id": "session_2"}}, demiurge.TaskOrigin{HostID: old.host.ID()})
	if err != nil {
		t.Fatal(err)
	}
	old.cp.MarkStarted(ctx, crashed.ID)
	old.cp.Fail(ctx, crashed.ID, "boom")
	// Still running when its Host goes away.
	lostTask := old.run(t, "ignore", nil)
	if err := old.host.Close(ctx); err != nil {
		t.Fatal(err)
	}

	rc := newRecorder()
	fresh := newRig(t, path, controlplane.WorkerOptions{}, rc.fn)
	rep, err := fresh.db.Reconcile(ctx, fresh.host.ID())
	if err != nil || rep.TasksLost != 1 || rep.LostTaskIDs[0] != lostTask.ID {
		t.Fatalf("reconcile %+v, %v", rep, err)
	}
	got := map[string]string{}
	for range 3 {
		c := rc.next(t)
		got[c.TaskID] = c.Task.Status
	}
	want := map[string]string{pending.ID: demiurge.TaskSucceeded, crashed.ID: demiurge.TaskFailed, lostTask.ID: demiurge.TaskLost}
	if len(got) != 3 || got[pending.ID] != want[pending.ID] || got[crashed.ID] != want[crashed.ID] || got[lostTask.ID] != want[lostTask.ID] {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	// The old worker's runner now returns: the task stays lost, with no
	// second terminal event or completion.
	old.gates.release(lostTask.ID)
	if tk := old.wait(t, lostTask.ID); tk.Status != demiurge.TaskLost {
		t.Fatalf("lost task became %s", tk.Status)
	}
	for _, id := range []string{pending.ID, crashed.ID, lostTask.ID} {
		if n := len(completions(t, fresh.db, id)); n != 1 {
			t.Fatalf("task %s: %d completions", id, n)
		}
	}
	if n := len(terminalEvents(t, fresh.db, lostTask.ID)); n != 1 {
		t.Fatalf("lost task: %d terminal events", n)
	}
}

// The latency from a task's end to its delivery stays under 50 ms (the
// median; scaled under the race detector).
func TestCompletionLatency(t *testing.T) {
	var mu sync.Mutex
	var lat []time.Duration
	ended := map[string]time.Time{}
	delivered := make(chan struct{}, 100)
	fn := func(ctx context.Context, c controlplane.Completion) error {
		mu.Lock()
		lat = append(lat, time.Since(ended[c.TaskID]))
		mu.Unlock()
		delivered <- struct{}{}
		return nil
	}
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, fn)
	for range 20 {
		tk := r.run(t, "wait", nil)
		mu.Lock()
		ended[tk.ID] = time.Now()
		mu.Unlock()
		r.gates.release(tk.ID)
		select {
		case <-delivered:
		case <-time.After(5 * time.Second):
			t.Fatal("no delivery")
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("completion latency median %s, max %s", lat[len(lat)/2], lat[len(lat)-1])
	limit := 50 * time.Millisecond
	if raceEnabled {
		limit *= 5
	}
	if lat[len(lat)/2] > limit {
		t.Fatalf("median latency %s, want ≤ %s", lat[len(lat)/2], limit)
	}
}

// Close delivers the completions due when its tasks have ended, so a
// short-lived Host announces what it ran, the shutdown cancels included.
func TestCloseDeliversDueCompletions(t *testing.T) {
	rc := newRecorder()
	r := newRig(t, dbPath(t), controlplane.WorkerOptions{}, rc.fn)
	tk := r.run(t, "wait", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-rc.ch:
		if c.TaskID != tk.ID || c.Task.Status != demiurge.TaskCancelled || c.Summary != controlplane.ShutdownReason {
			t.Fatalf("completion %+v", c)
		}
	default:
		t.Fatal("Close returned before the completion of its cancelled task was delivered")
	}
	if rows := completions(t, r.db, tk.ID); len(rows) != 1 || rows[0]["status"] != demiurge.WorkAcknowledged {
		t.Fatalf("completion row %v", rows)
	}
}
