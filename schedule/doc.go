// Package schedule is the scheduler of the long-lived Host (spec
// host-runtime §8, schedule.fire; work items §1.8; DESIGN §2 on restarts):
// it turns each core's schedule files
// (core.Schedule) into durable occurrences and fires each one once. It
// reaches the runtime store through the narrow Store interface (*store.DB)
// and imports only the root vocabulary and core.
//
// # Usage
//
//	s, err := schedule.New(schedule.Options{
//		Store: db, Location: tz.Location, OwnerID: host.ID(),
//		Cores: func(ctx context.Context) ([]schedule.CoreSchedules, error) { … },
//		Fire:  func(ctx context.Context, o schedule.Occurrence) error { … run a turn … },
//	})
//	go s.Run(ctx) // owned by the caller: cancel ctx, then wait for Run to return
//
// `demiurge schedules list` calls List; `demiurge schedules run ID` calls
// RunNow. Tick makes one pass at a given time and waits for the runs it
// started (tests, one-shot callers).
//
// # Contract
//
// An occurrence is a durable work item of kind schedule.fire, id
// "schedule:<core>:<schedule>:<due_at>" (due_at UTC, RFC 3339 with
// milliseconds), next_attempt_at = due_at. The cron expression is evaluated
// in the runtime timezone (Options.Location). For each enabled schedule a
// pass keeps exactly one future occurrence enqueued: a new schedule, or one
// whose expression or timezone changed, starts at its next occurrence after
// now and nothing runs on that pass. Due occurrences are claimed with a
// lease (ClaimDueWork) and fired through the Fire hook, which runs the
// turn; the work item then ends succeeded or failed (never retried: the
// next occurrence is the next chance). Occurrences missed while no Host ran
// collapse into one run, the latest due occurrence, whose Occurrence.Skipped
// counts the others; a waiting older occurrence is cancelled as superseded.
//
// A claimed occurrence whose schedule is gone, disabled or no longer matches
// its expression is cancelled, not run; disabling a schedule across an
// occurrence also means that, once re-enabled, it starts from its next
// occurrence instead of catching up. A manual run (RunNow) runs even a
// disabled schedule and leaves its occurrences alone. Each run reads the
// schedule as it is when claimed, so an edited prompt applies to the next
// run. A core that does not load (CoreSchedules.Err) enqueues nothing, and
// its due occurrences wait (DeferDelay) rather than being cancelled.
//
// Events: scheduler.scheduled, scheduler.claimed, scheduler.completed and
// scheduler.error, projected into scheduler_instances (claim_status
// scheduled, claimed, completed, error, and superseded, cancelled or lost).
// They are appended on one aggregate per schedule ("<core>:<schedule>",
// type scheduler), each carrying the schedule's whole state under
// "schedule_state", so the newest event is the state List reports (next and
// last run). Occurrence and instance are tied by the work id; the run id
// (task id, "schedule_run_…") is the work item's external_ref.
//
// # Concurrency
//
// A Scheduler is safe for concurrent use, except that Tick and Run must not
// run at the same time on one Scheduler. Several Hosts (processes) may run
// schedulers over one database: enqueues carry idempotency keys and are
// guarded by the schedule aggregate's last seq, and a claim is exclusive,
// so each occurrence is enqueued once and fired by one Host. At most
// MaxRuns runs are in flight per Scheduler; each is a goroutine that renews
// its claim every Heartbeat. Run owns every goroutine it starts: when ctx
// ends it stops polling, waits for the runs in flight (their context is
// ctx) and returns.
//
// # Failure modes
//
// A run is started at most once. Before the Fire hook is called the work
// item is marked running with the run id as external_ref; a Host that finds
// such an item claimable again (its Host stopped, the lease expired) marks
// it failed, "schedule run <id> was interrupted before it finished; it is
// not run again", and records the instance lost: nothing is re-executed
// after a restart. A claim whose lease expired before the run
// started is simply fired by the next claimer. A heartbeat that finds its
// claim taken over cancels the run. A panicking Fire hook fails the run. The
// end of a run is written even while the Host is stopping (bounded by a
// timeout), as failed "schedule run cancelled: the host is stopping" when
// the run was cancelled. Recorded errors are public messages only
// (demiurge.ErrorMessage). A pass goes on past the failure of one schedule;
// Tick returns the failures joined. Catch-up counting is exact up to
// 100,000 missed occurrences and a lower bound beyond.
//
// # Testing
//
// Options.Now injects the clock; the store must use the same clock (its
// Options.Now), because due work is claimed by the store's time. Tests run
// against real SQLite in t.TempDir(), with two DB handles on one file for
// two Hosts.
package schedule
