package schedule

import (
	"context"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// Status is one schedule as `demiurge schedules list` shows it. Times are
// UTC; zero when unknown.
type Status struct {
	CoreID     string
	ScheduleID string
	Cron       string
	Enabled    bool
	Prompt     string
	File       string // core-relative path of the schedule file
	// NextRun is the next occurrence (zero when disabled); it may be in the
	// past when an occurrence is due and waits for a pass.
	NextRun time.Time
	// The last run started: its occurrence, run (task) id, status
	// (running, succeeded, failed, lost; "" when it never ran), error,
	// skipped count and end.
	LastRun      time.Time
	LastRunID    string
	LastStatus   string
	LastError    string
	LastSkipped  int
	LastManual   bool
	LastFinished time.Time
	// CoreError is set, with ScheduleID empty, for a core that does not
	// load.
	CoreError string
}

// List returns the status of every schedule of every core, in the order the
// Cores hook gives them, with one row per core that does not load.
func (s *Scheduler) List(ctx context.Context) ([]Status, error) {
	cores, err := s.cores(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []Status
	for _, cs := range cores {
		if cs.Err != nil {
			out = append(out, Status{CoreID: cs.CoreID, CoreError: demiurge.ErrorMessage(cs.Err)})
			continue
		}
		for _, sc := range cs.Schedules {
			st, err := s.readState(ctx, cs.CoreID, sc.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, Status{
				CoreID: cs.CoreID, ScheduleID: sc.ID, Cron: sc.Cron, Enabled: sc.Enabled, Prompt: sc.Prompt,
				File: sc.RelPath, NextRun: s.nextRun(sc, st, now),
				LastRun: st.LastDue, LastRunID: st.LastRunID, LastStatus: st.LastStatus, LastError: st.LastError,
				LastSkipped: st.LastSkipped, LastManual: st.LastManual, LastFinished: st.LastFinished,
			})
		}
	}
	return out, nil
}

// nextRun is the enqueued head when it is current and has not run yet,
// else the next occurrence after now.
func (s *Scheduler) nextRun(sc core.Schedule, st state, now time.Time) time.Time {
	if !sc.Enabled {
		return time.Time{}
	}
	next := sc.Next(now, s.loc)
	if st.HeadSig == s.signature(sc) && !st.HeadDue.IsZero() && st.HeadDue.Before(next) &&
		!(st.LastDue.Equal(st.HeadDue) && !st.LastManual) {
		return st.HeadDue
	}
	return next
}

// Run is the outcome of RunNow.
type Run struct {
	RunID  string
	WorkID string
	DueAt  time.Time
	Status string // the work item's final status: succeeded or failed
	Error  string // the recorded reason of a failed run
}

// RunNow runs one schedule now, once, outside its cron expression (also
// when it is disabled), and returns when the run has ended. The run is a
// durable occurrence like the others: if this process dies before claiming
// it, a running scheduler fires it shortly after. It fails with ENOTFOUND
// "schedule not found: <core>/<id>", with the core's error when the core
// does not load, and with ECONFLICT when another Host claimed the run
// first.
func (s *Scheduler) RunNow(ctx context.Context, coreID, scheduleID string) (Run, error) {
	cores, err := s.cores(ctx)
	if err != nil {
		return Run{}, err
	}
	idx := index(cores)
	c, ok := idx[coreID]
	if ok && c.err != nil {
		return Run{}, c.err
	}
	sc, found := c.schedules[scheduleID]
	if !ok || !found {
		return Run{}, demiurge.Errorf(demiurge.ENOTFOUND, "schedule not found: %s/%s", coreID, scheduleID)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	due := now
	var id string
	for {
		id = workID(coreID, scheduleID, due)
		if _, err := s.store.WorkItem(ctx, id); demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
			break
		} else if err != nil {
			return Run{}, err
		}
		due = due.Add(time.Millisecond)
	}
	if err := s.enqueueManual(ctx, coreID, sc, id, due, now); err != nil {
		return Run{}, err
	}
	w, claimed, err := s.store.ClaimWork(ctx, id, s.owner, s.lease)
	if err != nil {
		return Run{}, err
	}
	if !claimed {
		return Run{}, demiurge.Errorf(demiurge.ECONFLICT, "schedule run %s was claimed by another host", id)
	}
	var runs sync.WaitGroup
	s.handle(ctx, now, w, idx, nil, &runs)
	runs.Wait()
	final, err := s.store.WorkItem(context.WithoutCancel(ctx), id)
	if err != nil {
		return Run{}, err
	}
	run := Run{RunID: final.ExternalRef, WorkID: id, DueAt: due, Status: final.Status, Error: final.LastError}
	if final.Status == demiurge.WorkSucceeded {
		run.Error = ""
	}
	return run, nil
}

// enqueueManual appends a manual occurrence, not yet due for other Hosts;
// it leaves the schedule's head alone.
func (s *Scheduler) enqueueManual(ctx context.Context, coreID string, sc core.Schedule, id string, due, now time.Time) error {
	events, in, key, err := s.occurrenceEvents(ctx, coreID, sc, id, due, now.Add(manualGrace), 0, true)
	if err != nil {
		return err
	}
	return s.recordAll(ctx, coreID, sc.ID, key, events, in, nil)
}
