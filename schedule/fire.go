package schedule

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// Occurrence is one run of a schedule, as the Fire hook gets it.
type Occurrence struct {
	CoreID     string
	ScheduleID string
	// Schedule is the definition current when the occurrence was claimed:
	// its prompt, slots and delivery are what the run uses.
	Schedule core.Schedule
	// DueAt is the occurrence (UTC); for a manual run, when it was asked for.
	DueAt time.Time
	// ScheduledAt is when this Host claimed it.
	ScheduledAt time.Time
	// Location is the runtime timezone the cron expression was evaluated in.
	Location *time.Location
	// RunID ("schedule_run_…") is the task id of the run.
	RunID string
	// WorkID ("schedule:<core>:<schedule>:<due_at>") is the durable work id,
	// and the idempotency key of the run's task.
	WorkID string
	// Skipped counts the occurrences missed while no Host ran that were
	// collapsed into this run.
	Skipped int
	// Manual reports a run asked for by RunNow (demiurge schedules run).
	Manual bool
	// Attempt is the claim count of the work item (1 for a first claim).
	Attempt int
}

// IdempotencyKey returns the idempotency key of the run's task.
func (o Occurrence) IdempotencyKey() string { return o.WorkID }

// Metadata returns the facts a scheduled session and turn record (spec
// host-runtime §8.1): trigger, schedule and run ids, due and scheduled
// times in UTC and in the runtime timezone, delivery and skipped count.
func (o Occurrence) Metadata() map[string]any {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	local := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
	d := o.Schedule.Delivery
	m := map[string]any{
		"trigger": "schedule", "core_id": o.CoreID, "schedule_id": o.ScheduleID, "run_id": o.RunID,
		"work_id": o.WorkID, "due_at": demiurge.FormatTime(o.DueAt), "due_at_local": local(o.DueAt),
		"scheduled_at": demiurge.FormatTime(o.ScheduledAt), "scheduled_at_local": local(o.ScheduledAt),
		"timezone": loc.String(), "delivery_mode": d.Mode, "skipped": o.Skipped, "manual": o.Manual,
	}
	if d.Mode != core.ScheduleDeliveryLocal && d.Mode != "" {
		m["delivery_channel"] = d.ChannelName()
		m["delivery_target"] = d.DeliveryTarget()
	}
	return m
}

// occurrence is what a work item's payload says about its occurrence.
type occurrence struct {
	coreID, scheduleID string
	due                time.Time
	skipped            int
	manual             bool
}

func occurrenceOf(w demiurge.WorkItem) (occurrence, string) {
	o := occurrence{
		coreID: str(w.Payload, "core_id"), scheduleID: str(w.Payload, "schedule_id"),
		due: demiurge.ParseTime(str(w.Payload, "due_at")), skipped: num(w.Payload, "skipped"),
	}
	o.manual, _ = w.Payload["manual"].(bool)
	if o.coreID == "" || o.scheduleID == "" || o.due.IsZero() {
		return o, "payload lacks core_id, schedule_id or due_at"
	}
	if w.ID != workID(o.coreID, o.scheduleID, o.due) {
		return o, "payload does not match the work id"
	}
	return o, ""
}

// handle settles or fires one claimed work item.
func (s *Scheduler) handle(ctx context.Context, now time.Time, w demiurge.WorkItem, idx coreIndex, rep *report, runs *sync.WaitGroup) {
	o, problem := occurrenceOf(w)
	var err error
	switch c, known := idx[o.coreID]; {
	case problem != "":
		_, err = s.store.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkFailed,
			demiurge.WorkFields{LastError: "invalid schedule.fire work item: " + problem})
	case w.ExternalRef != "":
		err = s.interrupted(ctx, w, o, rep)
	case !known:
		err = s.cancel(ctx, w, o, "core not found: "+o.coreID, false, rep)
	case c.err != nil:
		_, err = s.store.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{
			RetryAt:   now.Add(s.deferDelay),
			LastError: "core " + o.coreID + " does not load: " + demiurge.ErrorMessage(c.err),
		})
		if err == nil {
			rep.add(func(r *TickReport) { r.Deferred++ })
		}
	default:
		sc, found := c.schedules[o.scheduleID]
		switch {
		case !found:
			err = s.cancel(ctx, w, o, "schedule not found: "+o.coreID+"/"+o.scheduleID, false, rep)
		case o.manual:
			err = s.start(ctx, now, w, o, sc, rep, runs)
		case !sc.Enabled:
			// The head goes too: a re-enabled schedule starts from its next
			// occurrence instead of catching up the disabled period.
			err = s.cancel(ctx, w, o, "schedule disabled: "+o.coreID+"/"+o.scheduleID, true, rep)
		case !sc.IsOccurrence(o.due, s.loc):
			err = s.cancel(ctx, w, o, fmt.Sprintf("schedule changed: %s is not an occurrence of %q in %s",
				demiurge.FormatTime(o.due), sc.Cron, s.loc), false, rep)
		default:
			err = s.start(ctx, now, w, o, sc, rep, runs)
		}
	}
	if err != nil {
		s.log.Warn("scheduler: cannot settle occurrence", "work_id", w.ID, "error", err)
	}
}

// cancel settles an occurrence that must not run.
func (s *Scheduler) cancel(ctx context.Context, w demiurge.WorkItem, o occurrence, reason string, resetHead bool, rep *report) error {
	if _, err := s.store.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkCancelled, demiurge.WorkFields{LastError: reason}); err != nil {
		return err
	}
	rep.add(func(r *TickReport) { r.Cancelled++ })
	in := newInstance(demiurge.EvSchedulerCompleted, o.coreID, o.scheduleID, o.due, demiurge.SchedulerInstance{
		ClaimStatus: instanceCancelled, Reason: reason,
	})
	return s.record(ctx, o.coreID, o.scheduleID, "scheduler:"+w.ID+":cancelled", in, func(st *state) {
		if resetHead {
			st.HeadSig = ""
		}
	})
}

// interrupted settles an occurrence whose run started on a Host that
// stopped before recording its end. The run is not started again: its
// effects may have happened (DESIGN §2, Restart).
func (s *Scheduler) interrupted(ctx context.Context, w demiurge.WorkItem, o occurrence, rep *report) error {
	reason := "schedule run " + w.ExternalRef + " was interrupted before it finished; it is not run again"
	if _, err := s.store.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkFailed, demiurge.WorkFields{LastError: reason}); err != nil {
		return err
	}
	rep.add(func(r *TickReport) { r.Interrupted++ })
	in := newInstance(demiurge.EvSchedulerError, o.coreID, o.scheduleID, o.due, demiurge.SchedulerInstance{
		ClaimStatus: instanceLost, TaskID: w.ExternalRef, Error: reason,
	})
	return s.record(ctx, o.coreID, o.scheduleID, "scheduler:"+w.ID+":lost:"+w.ExternalRef, in, func(st *state) {
		if st.LastRunID == w.ExternalRef {
			st.LastStatus, st.LastError, st.LastFinished = runLost, reason, s.now().UTC()
		}
	})
}

// start records the claim, marks the work item running with the run id as
// its external reference (from then on the occurrence is never started
// again), and fires it in a goroutine holding a run slot. With runs set
// the caller waits for it there.
func (s *Scheduler) start(ctx context.Context, now time.Time, w demiurge.WorkItem, o occurrence, sc core.Schedule, rep *report, runs *sync.WaitGroup) error {
	occ := Occurrence{
		CoreID: o.coreID, ScheduleID: o.scheduleID, Schedule: sc, DueAt: o.due, ScheduledAt: now.UTC(),
		Location: s.loc, RunID: demiurge.NewID("schedule_run"), WorkID: w.ID, Skipped: o.skipped,
		Manual: o.manual, Attempt: w.Attempts,
	}
	claimed := newInstance(demiurge.EvSchedulerClaimed, o.coreID, o.scheduleID, o.due, demiurge.SchedulerInstance{
		ClaimStatus: instanceClaimed, TaskID: occ.RunID, IdempotencyKey: w.ID,
		ClaimID: w.ClaimID, LeaseExpiresAt: demiurge.FormatTime(w.LeaseExpiresAt),
		Skipped: o.skipped, Manual: o.manual,
	})
	err := s.record(ctx, o.coreID, o.scheduleID, "scheduler:"+w.ID+":claimed:"+occ.RunID, claimed, func(st *state) {
		st.LastDue, st.LastRunID, st.LastStatus = o.due, occ.RunID, runRunning
		st.LastError, st.LastSkipped, st.LastManual, st.LastFinished = "", o.skipped, o.manual, time.Time{}
	})
	if err != nil {
		// Unrecorded, the claim simply lapses and a later pass retries.
		return err
	}
	if _, err := s.store.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkRunning,
		demiurge.WorkFields{Lease: s.lease, ExternalRef: occ.RunID}); err != nil {
		return err
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		// Marked running but never fired: the next claim reports it
		// interrupted rather than risk a second run.
		return ctx.Err()
	}
	rep.add(func(r *TickReport) { r.Fired++ })
	s.wg.Add(1)
	if runs != nil {
		runs.Add(1)
	}
	go func() {
		defer func() {
			<-s.slots
			if runs != nil {
				runs.Done()
			}
			s.wg.Done()
			s.signal()
		}()
		s.run(ctx, w, occ, rep)
	}()
	return nil
}

// run fires occ while a heartbeat keeps its claim, then records the end.
func (s *Scheduler) run(ctx context.Context, w demiurge.WorkItem, occ Occurrence, rep *report) {
	fireCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	var hb sync.WaitGroup
	hb.Add(1)
	go func() {
		defer hb.Done()
		s.keepAlive(fireCtx, cancel, w, stop)
	}()
	err := s.safeFire(fireCtx, occ)
	close(stop)
	hb.Wait()
	s.finish(ctx, w, occ, err, rep)
}

// keepAlive renews the claim every heartbeat until stop closes. A claim
// that was lost (another Host holds the item) cancels the run.
func (s *Scheduler) keepAlive(ctx context.Context, cancel context.CancelFunc, w demiurge.WorkItem, stop <-chan struct{}) {
	t := time.NewTicker(s.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			_, err := s.store.TransitionWork(ctx, w.ID, w.ClaimID, demiurge.WorkHeartbeat, demiurge.WorkFields{Lease: s.lease})
			switch {
			case err == nil:
			case demiurge.ErrorCode(err) == demiurge.ECONFLICT:
				s.log.Error("scheduler: claim lost while running; cancelling the run", "work_id", w.ID, "error", err)
				cancel()
				return
			default:
				s.log.Warn("scheduler: heartbeat failed", "work_id", w.ID, "error", err)
			}
		}
	}
}

// safeFire calls the Fire hook; a panic is the run's failure, not the
// Host's.
func (s *Scheduler) safeFire(ctx context.Context, occ Occurrence) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("scheduler: fire hook panicked", "run_id", occ.RunID, "panic", fmt.Sprint(r))
			err = demiurge.Errorf(demiurge.EINTERNAL, "schedule run panicked")
		}
	}()
	return s.fire(ctx, occ)
}

// finish records the end of a run: the work item succeeded or failed and
// scheduler.completed or scheduler.error. It writes even when ctx has ended
// (the Host is stopping), within finishTimeout.
func (s *Scheduler) finish(ctx context.Context, w demiurge.WorkItem, occ Occurrence, runErr error, rep *report) {
	stopping := ctx.Err() != nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	status, instance, evType, runStatus, msg := demiurge.WorkSucceeded, instanceCompleted, demiurge.EvSchedulerCompleted, runSucceeded, ""
	if runErr != nil {
		status, instance, evType, runStatus = demiurge.WorkFailed, instanceError, demiurge.EvSchedulerError, runFailed
		msg = errorText(runErr, stopping)
	}
	_, err := s.store.TransitionWork(ctx, w.ID, w.ClaimID, status, demiurge.WorkFields{LastError: msg, ExternalRef: occ.RunID})
	if err != nil {
		s.log.Error("scheduler: cannot record the end of a run", "run_id", occ.RunID, "error", err)
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			err = demiurge.WrapError(demiurge.ECONFLICT, err, "stale scheduler claim: %s", occ.RunID)
		}
		status, instance, evType, runStatus, msg = demiurge.WorkFailed, instanceError, demiurge.EvSchedulerError, runFailed, demiurge.ErrorMessage(err)
	}
	rep.add(func(r *TickReport) {
		if status == demiurge.WorkSucceeded {
			r.Succeeded++
		} else {
			r.Failed++
		}
	})
	in := newInstance(evType, occ.CoreID, occ.ScheduleID, occ.DueAt, demiurge.SchedulerInstance{
		ClaimStatus: instance, TaskID: occ.RunID, Error: msg,
	})
	if err := s.record(ctx, occ.CoreID, occ.ScheduleID, "scheduler:"+w.ID+":"+instance+":"+occ.RunID, in, func(st *state) {
		if st.LastRunID == occ.RunID {
			st.LastStatus, st.LastError, st.LastFinished = runStatus, msg, s.now().UTC()
		}
	}); err != nil {
		s.log.Error("scheduler: cannot record the end of a run", "run_id", occ.RunID, "error", err)
	}
}

// errorText is the recorded reason of a failed run: the error's public
// message only.
func errorText(err error, stopping bool) string {
	switch {
	case stopping && (errors.Is(err, context.Canceled) || demiurge.ErrorCode(err) == demiurge.ECANCELED):
		return "schedule run cancelled: the host is stopping"
	case errors.Is(err, context.Canceled):
		return "schedule run cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "schedule run timed out"
	}
	return demiurge.ErrorMessage(err)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
