package schedule_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/schedule"
	"github.com/demiurge/demiurge/store"
)

// at returns 2025-03-10 (a Monday) at hh:mm:ss UTC.
func at(hh, mm, ss int) time.Time { return time.Date(2025, 3, 10, hh, mm, ss, 0, time.UTC) }

func mustSchedule(t *testing.T, id, cron string, enabled bool) core.Schedule {
	t.Helper()
	src := "schedule: \"" + cron + "\"\nprompt: run " + id + "\n"
	if !enabled {
		src += "enabled: false\n"
	}
	sc, err := core.ParseSchedule(id+".yaml", id, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// cores is a mutable Cores hook.
type cores struct {
	mu   sync.Mutex // guards list
	list []schedule.CoreSchedules
}

func (c *cores) set(list ...schedule.CoreSchedules) {
	c.mu.Lock()
	c.list = list
	c.mu.Unlock()
}

func (c *cores) hook(context.Context) ([]schedule.CoreSchedules, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]schedule.CoreSchedules(nil), c.list...), nil
}

func one(coreID string, scs ...core.Schedule) schedule.CoreSchedules {
	return schedule.CoreSchedules{CoreID: coreID, Schedules: scs}
}

// fires records the occurrences the Fire hook got; err (if set) is what
// every run returns.
type fires struct {
	mu   sync.Mutex // guards list, err
	list []schedule.Occurrence
	err  error
}

func (f *fires) hook(_ context.Context, o schedule.Occurrence) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, o)
	return f.err
}

func (f *fires) got() []schedule.Occurrence {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]schedule.Occurrence(nil), f.list...)
}

// rig is one Host: a store handle, a scheduler and its hooks; the store
// and the scheduler share the clock.
type rig struct {
	t     *testing.T
	clk   *demiurgetest.Clock
	db    *store.DB
	s     *schedule.Scheduler
	cores *cores
	fires *fires
}

func newRig(t *testing.T, path string, clk *demiurgetest.Clock, cs *cores, fire schedule.FireFunc, opts ...func(*schedule.Options)) *rig {
	t.Helper()
	r := &rig{t: t, clk: clk, db: demiurgetest.MustOpenPath(t, path, store.Options{Now: clk.Now}), cores: cs, fires: &fires{}}
	if fire == nil {
		fire = r.fires.hook
	}
	o := schedule.Options{Store: r.db, Cores: cs.hook, Fire: fire, Location: time.UTC, Now: clk.Now}
	for _, f := range opts {
		f(&o)
	}
	s, err := schedule.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	return r
}

func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "runtime", "runtime.sqlite3") }

// tick sets the clock to now and makes one pass.
func (r *rig) tick(now time.Time) schedule.TickReport {
	r.t.Helper()
	r.clk.Set(now)
	rep, err := r.s.Tick(context.Background(), now)
	if err != nil {
		r.t.Fatalf("Tick(%s): %v", now, err)
	}
	return rep
}

func (r *rig) work(coreID, scheduleID string, due time.Time) (demiurge.WorkItem, bool) {
	r.t.Helper()
	w, err := r.db.WorkItem(context.Background(), "schedule:"+coreID+":"+scheduleID+":"+demiurge.FormatTime(due))
	if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
		return w, false
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return w, true
}

func (r *rig) mustWork(coreID, scheduleID string, due time.Time) demiurge.WorkItem {
	r.t.Helper()
	w, ok := r.work(coreID, scheduleID, due)
	if !ok {
		r.t.Fatalf("no work item for %s/%s at %s", coreID, scheduleID, due)
	}
	return w
}

// instance returns the scheduler_instances row of an occurrence.
func (r *rig) instance(coreID, scheduleID string, due time.Time) map[string]any {
	r.t.Helper()
	rows, err := r.db.Query(context.Background(), store.Query{Table: "scheduler_instances",
		Where: map[string]any{"core_id": coreID, "schedule_id": scheduleID, "due_at": demiurge.FormatTime(due)}})
	if err != nil {
		r.t.Fatal(err)
	}
	if len(rows) != 1 {
		r.t.Fatalf("%d scheduler_instances rows for %s/%s at %s", len(rows), coreID, scheduleID, due)
	}
	return rows[0]
}

func (r *rig) list() map[string]schedule.Status {
	r.t.Helper()
	sts, err := r.s.List(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]schedule.Status{}
	for _, st := range sts {
		out[st.CoreID+"/"+st.ScheduleID] = st
	}
	return out
}
