package schedule_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/schedule"
)

func TestNewRequiresHooks(t *testing.T) {
	if _, err := schedule.New(schedule.Options{}); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("New({}) error = %v, want EINVALID", err)
	}
}

// A new schedule gets its next occurrence enqueued; nothing runs on that
// pass.
func TestFirstPassEnqueuesNextOccurrence(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true), mustSchedule(t, "off", "0 * * * *", false)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)

	rep := r.tick(at(10, 30, 0))
	if rep.Enqueued != 1 || rep.Fired != 0 {
		t.Fatalf("report = %+v, want 1 enqueued, 0 fired", rep)
	}
	w := r.mustWork("demo", "hourly", at(11, 0, 0))
	if w.Kind != demiurge.WorkKindScheduleFire || w.Status != demiurge.WorkQueued || !w.NextAttemptAt.Equal(at(11, 0, 0)) {
		t.Errorf("work item = %+v", w)
	}
	if got := r.instance("demo", "hourly", at(11, 0, 0))["claim_status"]; got != "scheduled" {
		t.Errorf("instance claim_status = %v, want scheduled", got)
	}
	if _, ok := r.work("demo", "off", at(11, 0, 0)); ok {
		t.Error("a disabled schedule got an occurrence")
	}
	// A second pass before the due time changes nothing.
	if rep := r.tick(at(10, 59, 59)); rep != (schedule.TickReport{}) {
		t.Errorf("second pass report = %+v, want nothing", rep)
	}
}

// The due occurrence fires once; the next one is enqueued by the same pass.
func TestDueOccurrenceFiresOnce(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)
	r.tick(at(10, 30, 0))

	rep := r.tick(at(11, 0, 5))
	if rep.Fired != 1 || rep.Succeeded != 1 || rep.Enqueued != 1 {
		t.Fatalf("report = %+v, want 1 fired, 1 succeeded, 1 enqueued", rep)
	}
	got := r.fires.got()
	if len(got) != 1 {
		t.Fatalf("fired %d times, want 1", len(got))
	}
	o := got[0]
	if o.CoreID != "demo" || o.ScheduleID != "hourly" || !o.DueAt.Equal(at(11, 0, 0)) || o.Skipped != 0 || o.Manual ||
		!strings.HasPrefix(o.RunID, "schedule_run_") || o.WorkID != "schedule:demo:hourly:2025-03-10T11:00:00.000Z" ||
		o.IdempotencyKey() != o.WorkID || o.Schedule.Prompt != "run hourly" || !o.ScheduledAt.Equal(at(11, 0, 5)) {
		t.Errorf("occurrence = %+v", o)
	}
	w := r.mustWork("demo", "hourly", at(11, 0, 0))
	if w.Status != demiurge.WorkSucceeded || w.ExternalRef != o.RunID || w.Attempts != 1 {
		t.Errorf("work item = %+v, want succeeded with external_ref %s", w, o.RunID)
	}
	inst := r.instance("demo", "hourly", at(11, 0, 0))
	if inst["claim_status"] != "completed" || inst["task_id"] != o.RunID {
		t.Errorf("instance = %v", inst)
	}
	if w := r.mustWork("demo", "hourly", at(12, 0, 0)); w.Status != demiurge.WorkQueued {
		t.Errorf("next occurrence = %+v, want queued", w)
	}
	for _, now := range []time.Time{at(11, 0, 30), at(11, 59, 0)} {
		if rep := r.tick(now); rep.Fired != 0 {
			t.Errorf("pass at %s fired again: %+v", now, rep)
		}
	}
	if n := len(r.fires.got()); n != 1 {
		t.Fatalf("fired %d times, want 1", n)
	}
	if rep := r.tick(at(12, 0, 1)); rep.Fired != 1 {
		t.Errorf("12:00 pass = %+v, want it fired", rep)
	}
}

// Occurrences missed while no Host ran collapse into one run of the
// latest due occurrence, counting the others.
func TestMissedOccurrencesCollapseIntoOneRun(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	path := dbPath(t)
	clk := demiurgetest.NewClock(at(10, 30, 0))
	first := newRig(t, path, clk, cs, nil)
	first.tick(at(10, 30, 0)) // 11:00 enqueued, then the Host stops

	// Another process starts at 13:30.
	r := newRig(t, path, clk, cs, nil)
	rep := r.tick(at(13, 30, 0))
	if rep.Fired != 1 || rep.Superseded != 1 {
		t.Fatalf("report = %+v, want 1 fired, 1 superseded", rep)
	}
	got := r.fires.got()
	if len(got) != 1 || !got[0].DueAt.Equal(at(13, 0, 0)) || got[0].Skipped != 2 {
		t.Fatalf("fired %+v, want one run of 13:00 with 2 skipped", got)
	}
	if w := r.mustWork("demo", "hourly", at(11, 0, 0)); w.Status != demiurge.WorkCancelled || !strings.HasPrefix(w.LastError, "superseded by the occurrence at 2025-03-10T13:00:00.000Z") {
		t.Errorf("11:00 = %+v, want cancelled as superseded", w)
	}
	if got := r.instance("demo", "hourly", at(11, 0, 0))["claim_status"]; got != "superseded" {
		t.Errorf("11:00 instance = %v, want superseded", got)
	}
	if _, ok := r.work("demo", "hourly", at(12, 0, 0)); ok {
		t.Error("12:00 was enqueued; missed occurrences must collapse")
	}
	if w := r.mustWork("demo", "hourly", at(14, 0, 0)); w.Status != demiurge.WorkQueued {
		t.Errorf("14:00 = %+v, want queued", w)
	}
	if rep := r.tick(at(13, 31, 0)); rep.Fired != 0 {
		t.Errorf("a later pass fired again: %+v", rep)
	}
	st := r.list()["demo/hourly"]
	if !st.LastRun.Equal(at(13, 0, 0)) || st.LastStatus != "succeeded" || st.LastSkipped != 2 || !st.NextRun.Equal(at(14, 0, 0)) {
		t.Errorf("status = %+v", st)
	}
}

// A long outage of a dense schedule is collapsed without a catch-up loop.
func TestCollapseAfterLongOutage(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "minutely", "* * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 0, 30)), cs, nil)
	r.tick(at(10, 0, 30)) // 10:01 enqueued

	later := at(10, 0, 30).AddDate(1, 0, 0).Add(17 * time.Second)
	start := time.Now()
	rep := r.tick(later)
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("pass took %s", elapsed)
	}
	got := r.fires.got()
	want := later.Truncate(time.Minute)
	if rep.Fired != 1 || len(got) != 1 || !got[0].DueAt.Equal(want) || got[0].Skipped < 100_000 {
		t.Fatalf("report %+v, fired %+v; want one run at %s with ≥100000 skipped", rep, got, want)
	}
}

// A claim that lapsed before its run started is fired by the next claimer;
// a run that started on a Host that stopped is never started again.
func TestExpiredClaims(t *testing.T) {
	ctx := context.Background()
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	clk := demiurgetest.NewClock(at(10, 30, 0))
	r := newRig(t, dbPath(t), clk, cs, nil)
	r.tick(at(10, 30, 0))

	// A Host claimed 11:00 and died before starting the run.
	clk.Set(at(11, 0, 1))
	id := "schedule:demo:hourly:2025-03-10T11:00:00.000Z"
	if _, ok, err := r.db.ClaimWork(ctx, id, "dead-host", time.Minute); err != nil || !ok {
		t.Fatalf("ClaimWork = %v, %v", ok, err)
	}
	if rep := r.tick(at(11, 0, 30)); rep.Fired != 0 {
		t.Fatalf("fired under another Host's live lease: %+v", rep)
	}
	if rep := r.tick(at(11, 1, 2)); rep.Fired != 1 {
		t.Fatalf("expired claim not recovered: %+v", rep)
	}
	if w := r.mustWork("demo", "hourly", at(11, 0, 0)); w.Status != demiurge.WorkSucceeded || w.Attempts != 2 {
		t.Errorf("11:00 = %+v, want succeeded on the second claim", w)
	}

	// At 12:00 a Host claims the occurrence and starts its run, then dies.
	clk.Set(at(12, 0, 1))
	id = "schedule:demo:hourly:2025-03-10T12:00:00.000Z"
	w, ok, err := r.db.ClaimWork(ctx, id, "dead-host", time.Minute)
	if err != nil || !ok {
		t.Fatalf("ClaimWork = %v, %v", ok, err)
	}
	if _, err := r.db.TransitionWork(ctx, id, w.ClaimID, demiurge.WorkRunning, demiurge.WorkFields{Lease: time.Minute, ExternalRef: "schedule_run_dead"}); err != nil {
		t.Fatal(err)
	}
	// The next Host's startup recovery turns the expired claim into a retry.
	clk.Set(at(12, 5, 0))
	if rec, err := r.db.RecoverWork(ctx); err != nil || rec.Recovered != 1 {
		t.Fatalf("RecoverWork = %+v, %v", rec, err)
	}
	rep := r.tick(at(12, 5, 0))
	if rep.Fired != 0 || rep.Interrupted != 1 {
		t.Fatalf("report = %+v, want 1 interrupted and nothing fired", rep)
	}
	w = r.mustWork("demo", "hourly", at(12, 0, 0))
	if w.Status != demiurge.WorkFailed || w.LastError != "schedule run schedule_run_dead was interrupted before it finished; it is not run again" {
		t.Errorf("12:00 = %+v", w)
	}
	if got := r.instance("demo", "hourly", at(12, 0, 0))["claim_status"]; got != "lost" {
		t.Errorf("12:00 instance = %v, want lost", got)
	}
	if n := len(r.fires.got()); n != 1 {
		t.Errorf("fired %d times, want 1", n)
	}
}

// A run in flight on one Host whose claim lapses (the Host hangs) is
// taken over and marked interrupted by another Host, never run twice, and
// the first Host's late end is refused as a stale claim.
func TestRunIsNeverStartedTwice(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	path := dbPath(t)
	clk := demiurgetest.NewClock(at(10, 30, 0))
	release := make(chan struct{})
	started := make(chan schedule.Occurrence, 1)
	var calls sync.WaitGroup
	hung := newRig(t, path, clk, cs, func(ctx context.Context, o schedule.Occurrence) error {
		started <- o
		<-release
		return nil
	}, func(o *schedule.Options) { o.Heartbeat = time.Hour })
	other := newRig(t, path, clk, cs, nil)
	hung.tick(at(10, 30, 0))

	clk.Set(at(11, 0, 1))
	calls.Add(1)
	go func() {
		defer calls.Done()
		if _, err := hung.s.Tick(context.Background(), at(11, 0, 1)); err != nil {
			t.Errorf("hung Tick: %v", err)
		}
	}()
	o := <-started
	// No heartbeat comes (the Host hangs); the lease runs out.
	rep := other.tick(at(11, 2, 0))
	if rep.Fired != 0 || rep.Interrupted != 1 {
		t.Fatalf("other report = %+v, want the run marked interrupted", rep)
	}
	close(release)
	calls.Wait()
	w := other.mustWork("demo", "hourly", at(11, 0, 0))
	if w.Status != demiurge.WorkFailed || !strings.Contains(w.LastError, o.RunID) {
		t.Errorf("work item = %+v", w)
	}
	if n := len(other.fires.got()); n != 0 {
		t.Errorf("the other Host fired %d runs", n)
	}
}

// Two Hosts on one database enqueue each occurrence once and fire it once,
// on time and after an outage.
func TestTwoHostsFireOnce(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true), mustSchedule(t, "half", "30 * * * *", true)))
	path := dbPath(t)
	clk := demiurgetest.NewClock(at(10, 15, 0))
	var mu sync.Mutex
	var all []schedule.Occurrence
	record := func(_ context.Context, o schedule.Occurrence) error {
		mu.Lock()
		all = append(all, o)
		mu.Unlock()
		return nil
	}
	a := newRig(t, path, clk, cs, record)
	b := newRig(t, path, clk, cs, record)
	both := func(now time.Time) {
		clk.Set(now)
		var wg sync.WaitGroup
		for _, r := range []*rig{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 3; i++ {
					if _, err := r.s.Tick(context.Background(), now); err != nil {
						t.Errorf("Tick: %v", err)
					}
				}
			}()
		}
		wg.Wait()
	}
	both(at(10, 15, 0))
	both(at(10, 30, 2))
	both(at(11, 0, 2))
	both(at(14, 45, 0)) // both were down: 11:30 … 14:30 collapse per schedule

	mu.Lock()
	defer mu.Unlock()
	count := map[string]int{}
	for _, o := range all {
		count[o.WorkID]++
	}
	want := map[string]int{
		"schedule:demo:half:2025-03-10T10:30:00.000Z":   1,
		"schedule:demo:hourly:2025-03-10T11:00:00.000Z": 1,
		"schedule:demo:hourly:2025-03-10T14:00:00.000Z": 1,
		"schedule:demo:half:2025-03-10T14:30:00.000Z":   1,
	}
	if len(count) != len(want) {
		t.Errorf("fired %v, want %v", count, want)
	}
	for id, n := range want {
		if count[id] != n {
			t.Errorf("%s fired %d times, want %d (all: %v)", id, count[id], n, count)
		}
	}
	for _, o := range all {
		if o.WorkID == "schedule:demo:hourly:2025-03-10T14:00:00.000Z" && o.Skipped != 2 {
			t.Errorf("14:00 run skipped %d, want 2 (12:00, 13:00)", o.Skipped)
		}
		if o.WorkID == "schedule:demo:half:2025-03-10T14:30:00.000Z" && o.Skipped != 3 {
			t.Errorf("14:30 run skipped %d, want 3 (11:30, 12:30, 13:30)", o.Skipped)
		}
	}
}

// A disabled schedule does not fire: its waiting occurrence is cancelled,
// and once re-enabled it starts from its next occurrence.
func TestDisabledScheduleDoesNotFire(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)
	r.tick(at(10, 30, 0))

	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", false)))
	rep := r.tick(at(11, 0, 5))
	if rep.Fired != 0 || rep.Cancelled != 1 || rep.Enqueued != 0 {
		t.Fatalf("report = %+v, want the occurrence cancelled", rep)
	}
	if w := r.mustWork("demo", "hourly", at(11, 0, 0)); w.Status != demiurge.WorkCancelled || w.LastError != "schedule disabled: demo/hourly" {
		t.Errorf("11:00 = %+v", w)
	}
	if st := r.list()["demo/hourly"]; !st.NextRun.IsZero() || st.Enabled {
		t.Errorf("disabled status = %+v", st)
	}
	if rep := r.tick(at(13, 0, 5)); rep != (schedule.TickReport{}) {
		t.Errorf("pass while disabled = %+v", rep)
	}

	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	rep = r.tick(at(15, 10, 0))
	if rep.Fired != 0 || rep.Enqueued != 1 {
		t.Fatalf("re-enabled report = %+v, want the next occurrence enqueued and no catch-up", rep)
	}
	if _, ok := r.work("demo", "hourly", at(16, 0, 0)); !ok {
		t.Error("16:00 not enqueued")
	}
	if n := len(r.fires.got()); n != 0 {
		t.Errorf("fired %d times", n)
	}
}

// An occurrence of an old expression is cancelled; the new expression
// starts from now.
func TestChangedExpression(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "job", "0 * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)
	r.tick(at(10, 30, 0)) // 11:00

	cs.set(one("demo", mustSchedule(t, "job", "45 * * * *", true)))
	if rep := r.tick(at(10, 40, 0)); rep.Enqueued != 1 || rep.Fired != 0 {
		t.Fatalf("report = %+v", rep)
	}
	if rep := r.tick(at(10, 45, 1)); rep.Fired != 1 {
		t.Fatalf("10:45 report = %+v", rep)
	}
	rep := r.tick(at(11, 0, 1))
	if rep.Fired != 0 || rep.Cancelled != 1 {
		t.Fatalf("11:00 report = %+v, want the old occurrence cancelled", rep)
	}
	if w := r.mustWork("demo", "job", at(11, 0, 0)); w.Status != demiurge.WorkCancelled || !strings.HasPrefix(w.LastError, "schedule changed:") {
		t.Errorf("11:00 = %+v", w)
	}
	// A removed schedule's occurrence is cancelled too.
	cs.set(one("demo"))
	if rep := r.tick(at(11, 45, 1)); rep.Cancelled != 1 || rep.Fired != 0 {
		t.Errorf("removed schedule report = %+v", rep)
	}
}

// A failing run is recorded failed with its public message.
func TestFailedRun(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)
	r.fires.err = demiurge.Errorf(demiurge.EINVALID, "schedule run requested user input")
	r.tick(at(10, 30, 0))
	if rep := r.tick(at(11, 0, 1)); rep.Failed != 1 || rep.Succeeded != 0 {
		t.Fatalf("report = %+v", rep)
	}
	w := r.mustWork("demo", "hourly", at(11, 0, 0))
	if w.Status != demiurge.WorkFailed || w.LastError != "schedule run requested user input" {
		t.Errorf("work item = %+v", w)
	}
	if got := r.instance("demo", "hourly", at(11, 0, 0)); got["claim_status"] != "error" {
		t.Errorf("instance = %v", got)
	}
	st := r.list()["demo/hourly"]
	if st.LastStatus != "failed" || st.LastError != "schedule run requested user input" || !st.LastFinished.Equal(at(11, 0, 1)) {
		t.Errorf("status = %+v", st)
	}
	// An uncoded error is recorded as "internal error", never its text.
	r.fires.mu.Lock()
	r.fires.err = errors.New("token=hunter2 leaked")
	r.fires.mu.Unlock()
	r.tick(at(12, 0, 1))
	if w := r.mustWork("demo", "hourly", at(12, 0, 0)); w.LastError != "internal error" {
		t.Errorf("uncoded error recorded as %q", w.LastError)
	}
}

// A panicking Fire hook fails the run, not the Host.
func TestPanickingFire(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, func(context.Context, schedule.Occurrence) error { panic("boom") })
	r.tick(at(10, 30, 0))
	if rep := r.tick(at(11, 0, 1)); rep.Failed != 1 {
		t.Fatalf("report = %+v", rep)
	}
	if w := r.mustWork("demo", "hourly", at(11, 0, 0)); w.Status != demiurge.WorkFailed || w.LastError != "schedule run panicked" {
		t.Errorf("work item = %+v", w)
	}
}

// A core that does not load keeps its due occurrences waiting.
func TestCoreThatDoesNotLoadDefers(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)
	r.tick(at(10, 30, 0))

	cs.set(schedule.CoreSchedules{CoreID: "demo", Err: demiurge.Errorf(demiurge.ECONFIG, "agents/demo/agent.yaml:3: bad")})
	rep := r.tick(at(11, 0, 1))
	if rep.Deferred != 1 || rep.Fired != 0 || rep.Cancelled != 0 {
		t.Fatalf("report = %+v, want the occurrence deferred", rep)
	}
	w := r.mustWork("demo", "hourly", at(11, 0, 0))
	if w.Status != demiurge.WorkRetryScheduled || !w.NextAttemptAt.Equal(at(11, 5, 1)) || !strings.Contains(w.LastError, "does not load") {
		t.Errorf("work item = %+v", w)
	}
	if st := r.list()["demo/"]; st.CoreError != "agents/demo/agent.yaml:3: bad" {
		t.Errorf("list row of the broken core = %+v", st)
	}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	if rep := r.tick(at(11, 3, 0)); rep.Fired != 0 {
		t.Errorf("fired before the deferral ended: %+v", rep)
	}
	if rep := r.tick(at(11, 5, 2)); rep.Fired != 1 {
		t.Errorf("report after the core loads again = %+v", rep)
	}
}

// RunNow runs a schedule at once, even a disabled one, and leaves its
// occurrences alone.
func TestRunNow(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "daily", "0 9 * * *", true), mustSchedule(t, "off", "0 9 * * *", false)))
	clk := demiurgetest.NewClock(at(10, 30, 0))
	r := newRig(t, dbPath(t), clk, cs, nil)
	r.tick(at(10, 30, 0)) // tomorrow 09:00 enqueued

	clk.Set(at(10, 31, 0))
	for _, id := range []string{"daily", "off"} {
		run, err := r.s.RunNow(context.Background(), "demo", id)
		if err != nil {
			t.Fatalf("RunNow(%s): %v", id, err)
		}
		if run.Status != demiurge.WorkSucceeded || !strings.HasPrefix(run.RunID, "schedule_run_") || !run.DueAt.Equal(at(10, 31, 0)) {
			t.Errorf("RunNow(%s) = %+v", id, run)
		}
	}
	got := r.fires.got()
	if len(got) != 2 || !got[0].Manual || got[0].ScheduleID != "daily" || got[1].ScheduleID != "off" {
		t.Fatalf("fired %+v", got)
	}
	st := r.list()["demo/daily"]
	if !st.NextRun.Equal(time.Date(2025, 3, 11, 9, 0, 0, 0, time.UTC)) || st.LastStatus != "succeeded" || !st.LastManual {
		t.Errorf("status after a manual run = %+v", st)
	}
	// A second RunNow in the same millisecond gets its own occurrence.
	if run, err := r.s.RunNow(context.Background(), "demo", "daily"); err != nil || run.WorkID == got[0].WorkID {
		t.Errorf("second RunNow = %+v, %v", run, err)
	}
	if _, err := r.s.RunNow(context.Background(), "demo", "nope"); demiurge.ErrorCode(err) != demiurge.ENOTFOUND || err.Error() != "schedule not found: demo/nope" {
		t.Errorf("RunNow(nope) error = %v", err)
	}
	// The cron occurrence still fires on time.
	if rep := r.tick(time.Date(2025, 3, 11, 9, 0, 1, 0, time.UTC)); rep.Fired != 1 {
		t.Errorf("09:00 report = %+v", rep)
	}
}

// List reports next and last runs.
func TestList(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)), one("other", mustSchedule(t, "daily", "@daily", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(10, 30, 0)), cs, nil)
	st := r.list()
	if len(st) != 2 || !st["demo/hourly"].NextRun.Equal(at(11, 0, 0)) || st["demo/hourly"].LastStatus != "" {
		t.Fatalf("list before any pass = %+v", st)
	}
	r.tick(at(10, 30, 0))
	r.clk.Set(at(11, 0, 3)) // due, not yet claimed
	if got := r.list()["demo/hourly"]; !got.NextRun.Equal(at(11, 0, 0)) {
		t.Errorf("next run of a due occurrence = %s, want 11:00", got.NextRun)
	}
	r.tick(at(11, 0, 3))
	got := r.list()["demo/hourly"]
	if !got.NextRun.Equal(at(12, 0, 0)) || !got.LastRun.Equal(at(11, 0, 0)) || got.LastStatus != "succeeded" ||
		!strings.HasPrefix(got.LastRunID, "schedule_run_") || got.Cron != "0 * * * *" || !got.Enabled {
		t.Errorf("status = %+v", got)
	}
	if o := r.list()["other/daily"]; !o.NextRun.Equal(time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("other/daily = %+v", o)
	}
}

// Cron expressions run in the runtime timezone.
func TestRuntimeTimezone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "morning", "0 9 * * *", true)))
	r := newRig(t, dbPath(t), demiurgetest.NewClock(at(0, 0, 0).Add(-time.Hour)), cs, nil, func(o *schedule.Options) { o.Location = tokyo })
	r.tick(at(0, 0, 0).Add(-time.Hour)) // 09:00 Tokyo is 00:00 UTC
	if rep := r.tick(at(0, 0, 1)); rep.Fired != 1 {
		t.Fatalf("report = %+v", rep)
	}
	o := r.fires.got()[0]
	if !o.DueAt.Equal(at(0, 0, 0)) || o.Metadata()["due_at_local"] != "2025-03-10T09:00:00+09:00" || o.Metadata()["timezone"] != "Asia/Tokyo" {
		t.Errorf("occurrence %+v, metadata %v", o, o.Metadata())
	}
}

// Run fires due work, stops when ctx ends, and returns only after the run
// in flight has returned and its end is recorded.
func TestRunStopsAndWaits(t *testing.T) {
	cs := &cores{}
	cs.set(one("demo", mustSchedule(t, "hourly", "0 * * * *", true)))
	clk := demiurgetest.NewClock(at(10, 30, 0))
	started := make(chan struct{})
	var returned sync.WaitGroup
	returned.Add(1)
	r := newRig(t, dbPath(t), clk, cs, func(ctx context.Context, o schedule.Occurrence) error {
		defer returned.Done()
		close(started)
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // a slow shutdown of the turn
		return demiurge.Errorf(demiurge.ECANCELED, "turn cancelled")
	}, func(o *schedule.Options) { o.PollInterval = 20 * time.Millisecond })
	r.tick(at(10, 30, 0))
	clk.Set(at(11, 0, 1))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.s.Run(ctx) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not fire the due occurrence")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	returned.Wait() // already done: Run waited for it
	w := r.mustWork("demo", "hourly", at(11, 0, 0))
	if w.Status != demiurge.WorkFailed || w.LastError != "schedule run cancelled: the host is stopping" {
		t.Errorf("work item after shutdown = %+v", w)
	}
}
