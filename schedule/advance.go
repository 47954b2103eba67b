package schedule

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// signature identifies what an enqueued occurrence was computed from: the
// runtime timezone and the cron expression. A schedule whose signature
// changed starts afresh from now (no catch-up of the old expression's
// occurrences). The prompt, slots and delivery are not part of it: a run
// always uses the schedule as it is when the occurrence is claimed.
func (s *Scheduler) signature(sc core.Schedule) string { return s.loc.String() + "|" + sc.Cron }

// advance keeps one enabled schedule's occurrences enqueued at now and
// returns its next future occurrence.
//
//   - No occurrence yet, or the cron expression or timezone changed: the
//     next occurrence after now is enqueued; nothing is due on this pass.
//   - The newest occurrence is in the future: nothing to do.
//   - The newest occurrence has come due (it is claimed by this pass) and
//     no later one has: the next occurrence is enqueued.
//   - Later occurrences came due while no Host ran: they collapse into one
//     run, the latest due occurrence, whose payload counts the skipped
//     ones; the newest one, if still waiting, is superseded (cancelled).
//
// Each step is one append guarded by the state it read; a step that loses
// a race is re-read and retried, so concurrent Hosts enqueue each
// occurrence once.
func (s *Scheduler) advance(ctx context.Context, now time.Time, coreID string, sc core.Schedule, rep *report) (time.Time, error) {
	sig := s.signature(sc)
	var err error
	for step := 0; step < 6; step++ {
		var st state
		if st, err = s.readState(ctx, coreID, sc.ID); err != nil {
			return time.Time{}, err
		}
		var done bool
		var next time.Time
		done, next, err = s.advanceStep(ctx, now, coreID, sc, sig, st, rep)
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			continue
		}
		if err != nil || done {
			return next, err
		}
	}
	return time.Time{}, err
}

// advanceStep takes one step of advance from st. done reports that the
// schedule has a future occurrence enqueued (next).
func (s *Scheduler) advanceStep(ctx context.Context, now time.Time, coreID string, sc core.Schedule, sig string, st state, rep *report) (done bool, next time.Time, err error) {
	if st.HeadDue.IsZero() || st.HeadSig != sig {
		next = sc.Next(now, s.loc)
		if next.IsZero() {
			return true, next, demiurge.Errorf(demiurge.EINVALID, "schedule %s/%s: %q has no next occurrence", coreID, sc.ID, sc.Cron)
		}
		// next is after now: once enqueued, there is nothing left to do.
		err = s.enqueue(ctx, coreID, sc, sig, st, next, 0, rep)
		return err == nil, next, err
	}
	if st.HeadDue.After(now) {
		return true, st.HeadDue, nil
	}
	latest, missed := collapse(sc, st.HeadDue, now, s.loc)
	if missed == 0 {
		next = sc.Next(st.HeadDue, s.loc)
		if next.IsZero() {
			return true, next, nil
		}
		// No occurrence lies in (head, now], so next is after now.
		err = s.enqueue(ctx, coreID, sc, sig, st, next, 0, rep)
		return err == nil, next, err
	}
	superseded, err := s.supersede(ctx, coreID, sc.ID, st.HeadDue, latest, rep)
	if err != nil {
		return false, time.Time{}, err
	}
	if superseded {
		// The supersede moved the state on; the catch-up is appended on
		// the next step from the fresh state, counting the superseded
		// occurrence as skipped (it is the head, which is now cancelled).
		return false, time.Time{}, nil
	}
	// The head counts as skipped when it never started: superseded here,
	// or settled by another Host racing this pass (the last run started
	// is older than the head).
	skipped := missed - 1
	if w, err := s.store.WorkItem(ctx, workID(coreID, sc.ID, st.HeadDue)); err == nil && (isSuperseded(w) || (w.ExternalRef == "" && st.LastDue.Before(st.HeadDue))) {
		skipped++
	}
	return false, latest, s.enqueue(ctx, coreID, sc, sig, st, latest, skipped, rep)
}

// collapse returns the latest occurrence of sc in (after, now] and how many
// occurrences that interval holds. A count past maxCollapseScan stops being
// exact: the scan then jumps close to now (the count is a lower bound).
func collapse(sc core.Schedule, after, now time.Time, loc *time.Location) (latest time.Time, n int) {
	t := sc.Next(after, loc)
	for !t.IsZero() && !t.After(now) {
		n++
		latest = t
		if n == maxCollapseScan {
			t = jumpNear(sc, t, now, loc)
			continue
		}
		t = sc.Next(t, loc)
	}
	return latest, n
}

const maxCollapseScan = 100_000

// jumpNear returns the first occurrence after t within the smallest window
// before now that holds one, or the occurrence after t.
func jumpNear(sc core.Schedule, t, now time.Time, loc *time.Location) time.Time {
	for _, w := range []time.Duration{time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour, 5 * 367 * 24 * time.Hour} {
		from := now.Add(-w)
		if !from.After(t) {
			break
		}
		if u := sc.Next(from, loc); !u.IsZero() && !u.After(now) {
			return u
		}
	}
	return sc.Next(t, loc)
}

// enqueue appends, as one batch guarded by st, the work item of the
// occurrence due (kind schedule.fire, next attempt at due) and the
// scheduler.scheduled event that makes it the schedule's head.
func (s *Scheduler) enqueue(ctx context.Context, coreID string, sc core.Schedule, sig string, st state, due time.Time, skipped int, rep *report) error {
	id := workID(coreID, sc.ID, due)
	next := st
	next.HeadDue, next.HeadSig = due, sig
	events, in, key, err := s.occurrenceEvents(ctx, coreID, sc, id, due, due, skipped, false)
	if err != nil {
		return err
	}
	if key == "" {
		// The work item exists already (an earlier expression had the same
		// occurrence): it is adopted as the head, not enqueued again.
		key = "scheduler:" + id + ":head:" + itoa(st.seq)
	}
	if err := s.commit(ctx, coreID, sc.ID, st, next, key, events, in); err != nil {
		return err
	}
	rep.add(func(r *TickReport) { r.Enqueued++ })
	return nil
}

// occurrenceEvents builds the work.enqueued event of an occurrence (none
// when its work item exists; key is then "") and its scheduler.scheduled
// event.
func (s *Scheduler) occurrenceEvents(ctx context.Context, coreID string, sc core.Schedule, id string, due, notBefore time.Time, skipped int, manual bool) (events []demiurge.Event, in occurrenceEvent, key string, err error) {
	_, err = s.store.WorkItem(ctx, id)
	exists := err == nil
	if err != nil && demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		return nil, in, "", err
	}
	if !exists {
		key = "scheduler:" + id + ":work"
		events = append(events, demiurge.NewEvent(demiurge.AggWork, id, demiurge.WorkEnqueuedPayload{
			Kind: demiurge.WorkKindScheduleFire, NextAttemptAt: demiurge.FormatTime(notBefore),
			// The work item's own payload: what fire.go reads back.
			Payload: map[string]any{
				"core_id": coreID, "schedule_id": sc.ID, "due_at": demiurge.FormatTime(due),
				"cron": sc.Cron, "timezone": s.loc.String(), "skipped": skipped, "manual": manual,
			},
		}))
	}
	in = newInstance(demiurge.EvSchedulerScheduled, coreID, sc.ID, due, demiurge.SchedulerInstance{
		ClaimStatus: instanceScheduled, IdempotencyKey: id, WorkID: id, Skipped: skipped, Manual: manual,
	})
	return events, in, key, nil
}

// supersede cancels the waiting occurrence due, replaced by the later
// occurrence by after downtime. It reports whether it did; an occurrence
// another Host holds, or that is already settled, is left alone.
func (s *Scheduler) supersede(ctx context.Context, coreID, scheduleID string, due, by time.Time, rep *report) (bool, error) {
	id := workID(coreID, scheduleID, due)
	w, ok, err := s.store.ClaimWork(ctx, id, s.owner, s.lease)
	if err != nil || !ok {
		return false, err
	}
	if w.ExternalRef != "" {
		// A run of it started on a Host that stopped: that is an
		// interrupted run, not a missed one.
		return false, s.interrupted(ctx, w, occurrence{coreID: coreID, scheduleID: scheduleID, due: due}, rep)
	}
	reason := "superseded by the occurrence at " + demiurge.FormatTime(by) + ": missed while no Host ran"
	if _, err := s.store.TransitionWork(ctx, id, w.ClaimID, demiurge.WorkCancelled, demiurge.WorkFields{LastError: reason}); err != nil {
		return false, err
	}
	in := newInstance(demiurge.EvSchedulerCompleted, coreID, scheduleID, due, demiurge.SchedulerInstance{
		ClaimStatus: instanceSuperseded, Reason: reason,
	})
	if err := s.record(ctx, coreID, scheduleID, "scheduler:"+id+":superseded", in, func(*state) {}); err != nil {
		return false, err
	}
	rep.add(func(r *TickReport) { r.Superseded++ })
	return true, nil
}

func isSuperseded(w demiurge.WorkItem) bool {
	return w.Status == demiurge.WorkCancelled && strings.HasPrefix(w.LastError, "superseded by")
}
