package schedule

import (
	"context"
	"fmt"
	"time"

	"github.com/demiurge/demiurge"
)

// state is the scheduler's record of one schedule. Every scheduler.* event
// of the schedule is appended on one aggregate, "<core>:<schedule>", and
// carries the whole state after it under "schedule_state", so the newest
// event of the aggregate is the current state. Appends name the last seq
// they read (demiurge.Expected), so two Hosts never both advance a
// schedule from the same state.
type state struct {
	seq int64 // the event that carried it; 0 when the schedule has none

	// HeadDue is the newest occurrence enqueued from the cron expression
	// (manual runs aside); HeadSig the signature it was computed under.
	HeadDue time.Time
	HeadSig string

	// The last run started: its occurrence, run id and outcome.
	LastDue      time.Time
	LastRunID    string
	LastStatus   string // running, succeeded, failed, lost
	LastError    string
	LastSkipped  int
	LastManual   bool
	LastFinished time.Time
}

// Last-run statuses.
const (
	runRunning   = "running"
	runSucceeded = "succeeded"
	runFailed    = "failed"
	runLost      = "lost"
)

// Instance statuses of scheduler_instances.claim_status: scheduled,
// claimed, completed and error as in the spec, plus the outcomes the Go
// scheduler adds.
const (
	instanceScheduled  = "scheduled"
	instanceClaimed    = "claimed"
	instanceCompleted  = "completed"
	instanceError      = "error"
	instanceSuperseded = "superseded" // replaced by a later occurrence after downtime
	instanceCancelled  = "cancelled"  // its schedule was removed, disabled or changed
	instanceLost       = "lost"       // its run was interrupted by a Host that stopped
)

func aggregateID(coreID, scheduleID string) string { return coreID + ":" + scheduleID }

// workID is the durable work id of an occurrence;
// it is also the idempotency key of the run's task.
func workID(coreID, scheduleID string, due time.Time) string {
	return "schedule:" + coreID + ":" + scheduleID + ":" + demiurge.FormatTime(due)
}

func (st state) payload() map[string]any {
	p := map[string]any{}
	putTime := func(k string, t time.Time) {
		if !t.IsZero() {
			p[k] = demiurge.FormatTime(t)
		}
	}
	putTime("head_due", st.HeadDue)
	putTime("last_due", st.LastDue)
	putTime("last_finished", st.LastFinished)
	for k, v := range map[string]string{"head_sig": st.HeadSig, "last_run_id": st.LastRunID,
		"last_status": st.LastStatus, "last_error": st.LastError} {
		if v != "" {
			p[k] = v
		}
	}
	if st.LastSkipped > 0 {
		p["last_skipped"] = st.LastSkipped
	}
	if st.LastManual {
		p["last_manual"] = true
	}
	return p
}

func stateFrom(ev demiurge.Event) state {
	st := state{seq: ev.Seq}
	p, _ := ev.Payload["schedule_state"].(map[string]any)
	st.HeadDue = demiurge.ParseTime(str(p, "head_due"))
	st.HeadSig = str(p, "head_sig")
	st.LastDue = demiurge.ParseTime(str(p, "last_due"))
	st.LastRunID = str(p, "last_run_id")
	st.LastStatus = str(p, "last_status")
	st.LastError = str(p, "last_error")
	st.LastSkipped = num(p, "last_skipped")
	st.LastManual, _ = p["last_manual"].(bool)
	st.LastFinished = demiurge.ParseTime(str(p, "last_finished"))
	return st
}

// readState returns the schedule's current state.
func (s *Scheduler) readState(ctx context.Context, coreID, scheduleID string) (state, error) {
	agg := aggregateID(coreID, scheduleID)
	seq, err := s.store.LastSeq(ctx, demiurge.AggScheduler, agg)
	if err != nil || seq == 0 {
		return state{}, err
	}
	evs, err := s.store.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggScheduler, AggregateID: agg, AfterSeq: seq - 1, Limit: 1})
	if err != nil {
		return state{}, err
	}
	if len(evs) == 0 {
		return state{}, demiurge.Errorf(demiurge.EINTERNAL, "scheduler state of %s vanished at seq %d", agg, seq)
	}
	return stateFrom(evs[0]), nil
}

// instanceEvent is a scheduler.* event about the occurrence due of a
// schedule; the projection keys scheduler_instances on (core_id,
// schedule_id, due_at).
func instanceEvent(typ, coreID, scheduleID string, due time.Time, fields map[string]any) demiurge.Event {
	p := map[string]any{"core_id": coreID, "schedule_id": scheduleID, "due_at": demiurge.FormatTime(due)}
	for k, v := range fields {
		p[k] = v
	}
	return demiurge.Event{AggregateType: demiurge.AggScheduler, AggregateID: aggregateID(coreID, scheduleID), Type: typ, Payload: p}
}

// commit appends events, the last of which is a scheduler event of the
// schedule, with next as the state it carries, provided the schedule is
// still at prev. It fails with ECONFLICT when another writer got in first.
func (s *Scheduler) commit(ctx context.Context, coreID, scheduleID string, prev, next state, key string, events ...demiurge.Event) error {
	last := &events[len(events)-1]
	last.Payload["schedule_state"] = next.payload()
	_, err := s.store.Append(ctx, events, key, &demiurge.Expected{
		AggregateType: demiurge.AggScheduler, AggregateID: aggregateID(coreID, scheduleID), LastSeq: prev.seq,
	})
	return err
}

// record appends one instance event whose state is change(current state),
// re-reading and retrying when another writer got in between. Use it for
// facts (a claim, an outcome) that stay true whatever else happened.
func (s *Scheduler) record(ctx context.Context, coreID, scheduleID, key string, ev demiurge.Event, change func(*state)) error {
	return s.recordAll(ctx, coreID, scheduleID, key, []demiurge.Event{ev}, change)
}

// recordAll is record for a batch whose last event is the schedule's; a nil
// change leaves the state as it is.
func (s *Scheduler) recordAll(ctx context.Context, coreID, scheduleID, key string, events []demiurge.Event, change func(*state)) error {
	var err error
	for attempt := 0; attempt < 8; attempt++ {
		var st state
		if st, err = s.readState(ctx, coreID, scheduleID); err != nil {
			return err
		}
		next := st
		if change != nil {
			change(&next)
		}
		// commit writes the state into the last payload: each attempt gets
		// its own copies.
		batch := make([]demiurge.Event, len(events))
		for i, e := range events {
			e.Payload = copyMap(e.Payload)
			batch[i] = e
		}
		if err = s.commit(ctx, coreID, scheduleID, st, next, key, batch...); demiurge.ErrorCode(err) != demiurge.ECONFLICT {
			return err
		}
	}
	return fmt.Errorf("scheduler: record %s for %s: %w", events[len(events)-1].Type, aggregateID(coreID, scheduleID), err)
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

func num(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}
