package schedule

import (
	"context"
	"fmt"
	"slices"
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

// workID is the durable work id of an occurrence (spec host-runtime §1.8);
// it is also the idempotency key of the run's task.
func workID(coreID, scheduleID string, due time.Time) string {
	return "schedule:" + coreID + ":" + scheduleID + ":" + demiurge.FormatTime(due)
}

// payload is st in the form the scheduler events carry.
func (st state) payload() demiurge.ScheduleState {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return demiurge.FormatTime(t)
	}
	return demiurge.ScheduleState{
		HeadDue: stamp(st.HeadDue), HeadSig: st.HeadSig, LastDue: stamp(st.LastDue), LastRunID: st.LastRunID,
		LastStatus: st.LastStatus, LastError: st.LastError, LastSkipped: max(st.LastSkipped, 0),
		LastManual: st.LastManual, LastFinished: stamp(st.LastFinished),
	}
}

// stateFrom reads the state a scheduler event carries.
func stateFrom(ev demiurge.Event) (state, error) {
	var in demiurge.SchedulerInstance
	if err := ev.Decode(&in); err != nil {
		return state{}, err
	}
	p := in.State
	return state{
		seq:     ev.Seq,
		HeadDue: demiurge.ParseTime(p.HeadDue), HeadSig: p.HeadSig,
		LastDue: demiurge.ParseTime(p.LastDue), LastRunID: p.LastRunID, LastStatus: p.LastStatus,
		LastError: p.LastError, LastSkipped: p.LastSkipped, LastManual: p.LastManual,
		LastFinished: demiurge.ParseTime(p.LastFinished),
	}, nil
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
	return stateFrom(evs[0])
}

// occurrenceEvent is a scheduler.* event about one occurrence of a schedule; the
// projection keys scheduler_instances on (core_id, schedule_id, due_at).
// The state it carries is set when it is committed.
type occurrenceEvent struct {
	typ string
	p   demiurge.SchedulerInstance
}

// newInstance is the event typ about the occurrence due, with the fields
// of p.
func newInstance(typ, coreID, scheduleID string, due time.Time, p demiurge.SchedulerInstance) occurrenceEvent {
	p.CoreID, p.ScheduleID, p.DueAt = coreID, scheduleID, demiurge.FormatTime(due)
	return occurrenceEvent{typ: typ, p: p}
}

// commit appends events and then in, carrying next as the schedule's
// state, provided the schedule is still at prev. It fails with ECONFLICT
// when another writer got in first.
func (s *Scheduler) commit(ctx context.Context, coreID, scheduleID string, prev, next state, key string, events []demiurge.Event, in occurrenceEvent) error {
	in.p.State = next.payload()
	p, err := in.p.As(in.typ)
	if err != nil {
		return err
	}
	agg := aggregateID(coreID, scheduleID)
	batch := append(slices.Clip(events), demiurge.NewEvent(demiurge.AggScheduler, agg, p))
	_, err = s.store.Append(ctx, batch, key, &demiurge.Expected{
		AggregateType: demiurge.AggScheduler, AggregateID: agg, LastSeq: prev.seq,
	})
	return err
}

// record appends one instance event whose state is change(current state),
// re-reading and retrying when another writer got in between. Use it for
// facts (a claim, an outcome) that stay true whatever else happened.
func (s *Scheduler) record(ctx context.Context, coreID, scheduleID, key string, in occurrenceEvent, change func(*state)) error {
	return s.recordAll(ctx, coreID, scheduleID, key, nil, in, change)
}

// recordAll is record for events followed by the schedule's instance
// event; a nil change leaves the state as it is.
func (s *Scheduler) recordAll(ctx context.Context, coreID, scheduleID, key string, events []demiurge.Event, in occurrenceEvent, change func(*state)) error {
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
		if err = s.commit(ctx, coreID, scheduleID, st, next, key, events, in); demiurge.ErrorCode(err) != demiurge.ECONFLICT {
			return err
		}
	}
	return fmt.Errorf("scheduler: record %s for %s: %w", in.typ, aggregateID(coreID, scheduleID), err)
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
