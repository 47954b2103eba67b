package schedule

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// Store is the part of the runtime store the scheduler uses; *store.DB
// implements it. Its clock must be the scheduler's clock: due work is
// claimed by the store's idea of now.
type Store interface {
	Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error)
	Events(ctx context.Context, f demiurge.EventFilter) ([]demiurge.Event, error)
	LastSeq(ctx context.Context, aggType, aggID string) (int64, error)
	WorkItem(ctx context.Context, id string) (demiurge.WorkItem, error)
	ClaimWork(ctx context.Context, workID, ownerID string, lease time.Duration) (demiurge.WorkItem, bool, error)
	ClaimDueWork(ctx context.Context, kind, ownerID string, lease time.Duration, limit int) ([]demiurge.WorkItem, error)
	TransitionWork(ctx context.Context, workID, claimID, toStatus string, fields demiurge.WorkFields) (demiurge.WorkItem, error)
}

// CoreSchedules is what the Cores hook reports for one core.
type CoreSchedules struct {
	CoreID    string
	Schedules []core.Schedule
	// Err is set when the core does not load. Its schedules are then
	// unknown: nothing of it is enqueued, and its due occurrences wait
	// (retried every DeferDelay) instead of being cancelled.
	Err error
}

// FireFunc runs one occurrence: the Host submits a schedule.fire task with
// task id o.RunID and idempotency key o.IdempotencyKey and runs a turn in a
// fresh system-owned session. A nil error records the run succeeded, an
// error records it failed with demiurge.ErrorMessage(err). It is called at
// most once per occurrence and may run for long: the claim is kept alive
// while it runs. ctx ends when the scheduler stops.
type FireFunc func(ctx context.Context, o Occurrence) error

// Defaults of Options.
const (
	DefaultPollInterval = 30 * time.Second
	DefaultMaxRuns      = 4
	DefaultDeferDelay   = 5 * time.Minute
	// manualGrace keeps a RunNow item out of other Hosts' due claims while
	// RunNow claims it itself.
	manualGrace = 2 * time.Minute
	// finishTimeout bounds the store writes that record a run's end after
	// the scheduler's context ended.
	finishTimeout = 10 * time.Second
)

// Options configure a Scheduler. Store, Cores and Fire are required.
type Options struct {
	Store Store
	// Cores lists every core's schedules. An error fails the pass: without
	// the schedules nothing can be judged.
	Cores func(ctx context.Context) ([]CoreSchedules, error)
	Fire  FireFunc
	// Location is the runtime timezone cron expressions are evaluated in.
	// Default time.Local.
	Location *time.Location
	// OwnerID names this Host on its claims. Default "scheduler_<id>".
	OwnerID string
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Lease is the claim lease, renewed every Heartbeat while a run lasts.
	// Defaults demiurge.DefaultWorkLease and Lease/3.
	Lease     time.Duration
	Heartbeat time.Duration
	// PollInterval is the longest Run waits between passes. Default 30 s.
	PollInterval time.Duration
	// MaxRuns bounds the runs in flight at once. Default 4.
	MaxRuns int
	// DeferDelay is how long a due occurrence of a core that does not load
	// waits before it is looked at again. Default 5 min.
	DeferDelay time.Duration
	// Logger receives failures the scheduler recovers from. Default: discard.
	Logger *slog.Logger
}

// Scheduler enqueues, claims and fires schedule occurrences. It is safe for
// concurrent use, except that Tick and Run must not run at the same time on
// one Scheduler.
type Scheduler struct {
	store      Store
	cores      func(ctx context.Context) ([]CoreSchedules, error)
	fire       FireFunc
	loc        *time.Location
	owner      string
	now        func() time.Time
	lease      time.Duration
	heartbeat  time.Duration
	poll       time.Duration
	deferDelay time.Duration
	log        *slog.Logger

	slots chan struct{}  // one token per run in flight
	wg    sync.WaitGroup // every goroutine started by the scheduler
	kick  chan struct{}  // a run ended: Run looks again at once
}

// New returns a Scheduler. It fails with EINVALID when Store, Cores or Fire
// is missing.
func New(opts Options) (*Scheduler, error) {
	if opts.Store == nil || opts.Cores == nil || opts.Fire == nil {
		return nil, demiurge.Errorf(demiurge.EINVALID, "scheduler requires a store, a cores hook and a fire hook")
	}
	s := &Scheduler{
		store: opts.Store, cores: opts.Cores, fire: opts.Fire,
		loc: opts.Location, owner: opts.OwnerID, now: opts.Now,
		lease: opts.Lease, heartbeat: opts.Heartbeat, poll: opts.PollInterval,
		deferDelay: opts.DeferDelay, log: opts.Logger,
		kick: make(chan struct{}, 1),
	}
	if s.loc == nil {
		s.loc = time.Local
	}
	if s.owner == "" {
		s.owner = demiurge.NewID("scheduler")
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.lease <= 0 {
		s.lease = demiurge.DefaultWorkLease
	}
	if s.heartbeat <= 0 || s.heartbeat >= s.lease {
		s.heartbeat = s.lease / 3
	}
	if s.poll <= 0 {
		s.poll = DefaultPollInterval
	}
	if s.deferDelay <= 0 {
		s.deferDelay = DefaultDeferDelay
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	maxRuns := opts.MaxRuns
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	s.slots = make(chan struct{}, maxRuns)
	return s, nil
}

// TickReport counts what one Tick did.
type TickReport struct {
	Enqueued    int // occurrences enqueued (future ones and collapsed catch-ups)
	Superseded  int // waiting occurrences replaced by a later one after downtime
	Fired       int // runs started
	Succeeded   int
	Failed      int
	Cancelled   int // occurrences of removed, disabled or changed schedules
	Deferred    int // occurrences of cores that do not load, put back to wait
	Interrupted int // runs found started by a Host that stopped: marked failed, not run again
}

// report is a TickReport shared with the runs of a pass.
type report struct {
	mu sync.Mutex // guards r
	r  TickReport
}

func (r *report) add(f func(*TickReport)) {
	if r == nil {
		return
	}
	r.mu.Lock()
	f(&r.r)
	r.mu.Unlock()
}

// Tick makes one pass at now: it enqueues each enabled schedule's due and
// next occurrences, claims the due ones, fires them (at most MaxRuns at
// once) and waits for those runs to end. now should be the store's clock.
// The error joins the infrastructure failures met; the pass goes on past
// the failures of one schedule or one run.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) (TickReport, error) {
	rep := &report{}
	var runs sync.WaitGroup
	_, err := s.pass(ctx, now, rep, &runs)
	runs.Wait()
	rep.mu.Lock()
	defer rep.mu.Unlock()
	return rep.r, err
}

// Run makes passes until ctx ends: at the next known due time, when a run
// ends, and at least every PollInterval. It then waits for the runs in
// flight (their context is ctx, so they are being cancelled) and for every
// goroutine it started, and returns nil.
func (s *Scheduler) Run(ctx context.Context) error {
	defer s.wg.Wait()
	for {
		wake, err := s.pass(ctx, s.now(), nil, nil)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("scheduler pass failed", "error", err)
		}
		wait := s.poll
		if !wake.IsZero() {
			// A little past the due time, so the store's clock has passed it.
			if d := wake.Sub(s.now()) + 50*time.Millisecond; d < wait {
				wait = max(d, 10*time.Millisecond)
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		case <-s.kick:
			timer.Stop()
		}
	}
}

// pass is one Tick. With runs nil the runs it starts are not waited for
// (Run). It returns the earliest future occurrence it knows of.
func (s *Scheduler) pass(ctx context.Context, now time.Time, rep *report, runs *sync.WaitGroup) (time.Time, error) {
	cores, err := s.cores(ctx)
	if err != nil {
		return time.Time{}, demiurge.WrapError(demiurge.ErrorCode(err), err, "scheduler: list cores: %s", demiurge.ErrorMessage(err))
	}
	idx := index(cores)
	var errs []error
	var wake time.Time
	for _, cs := range cores {
		if cs.Err != nil {
			continue
		}
		for _, sc := range cs.Schedules {
			if !sc.Enabled {
				continue
			}
			next, err := s.advance(ctx, now, cs.CoreID, sc, rep)
			if err != nil {
				errs = append(errs, err)
				s.log.Warn("scheduler: cannot enqueue", "core", cs.CoreID, "schedule", sc.ID, "error", err)
				continue
			}
			if !next.IsZero() && (wake.IsZero() || next.Before(wake)) {
				wake = next
			}
		}
	}
	if err := s.claimDue(ctx, now, idx, rep, runs); err != nil {
		errs = append(errs, err)
	}
	return wake, errors.Join(errs...)
}

// coreIndex is the pass's view of the cores: schedules by id, or the
// error of a core that does not load.
type coreIndex map[string]struct {
	err       error
	schedules map[string]core.Schedule
}

func index(cores []CoreSchedules) coreIndex {
	idx := coreIndex{}
	for _, cs := range cores {
		e := idx[cs.CoreID]
		e.err = cs.Err
		e.schedules = map[string]core.Schedule{}
		for _, sc := range cs.Schedules {
			e.schedules[sc.ID] = sc
		}
		idx[cs.CoreID] = e
	}
	return idx
}

// claimDue claims due occurrences while run slots are free and settles or
// fires each.
func (s *Scheduler) claimDue(ctx context.Context, now time.Time, idx coreIndex, rep *report, runs *sync.WaitGroup) error {
	for {
		free := cap(s.slots) - len(s.slots)
		if free <= 0 {
			return nil
		}
		items, err := s.store.ClaimDueWork(ctx, demiurge.WorkKindScheduleFire, s.owner, s.lease, min(free, 100))
		if err != nil {
			return err
		}
		for _, w := range items {
			s.handle(ctx, now, w, idx, rep, runs)
		}
		if len(items) < min(free, 100) {
			return nil
		}
	}
}

// signal wakes Run after a run ended, without blocking.
func (s *Scheduler) signal() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
