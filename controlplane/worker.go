package controlplane

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// WorkerStore is the part of the RuntimeStore the task worker uses besides
// the control plane's Store: group-committed task appends, durable
// completion work (claims, retries, acknowledgements), the completions a
// crash left unemitted, and the cancel requests of other processes. The
// store adapter satisfies it; every method is safe for concurrent use.
type WorkerStore interface {
	// AppendTaskBatches appends each batch as Store.Append would, all in one
	// transaction, and reports per batch the stored events, the row of the
	// task its first event names, and its own error.
	AppendTaskBatches(ctx context.Context, batches []demiurge.EventBatch, each func(i int, stored []demiurge.Event, tk demiurge.Task, err error)) error
	ClaimDueWork(ctx context.Context, kind, ownerID string, lease time.Duration, limit int) ([]demiurge.WorkItem, error)
	TransitionWork(ctx context.Context, workID, claimID, toStatus string, fields demiurge.WorkFields) (demiurge.WorkItem, error)
	AcknowledgeTaskCompletion(ctx context.Context, workID, claimID string) (demiurge.WorkItem, error)
	TasksAwaitingCompletion(ctx context.Context, limit int) ([]demiurge.Task, error)
	TaskCancelRequests(ctx context.Context, hostID string) (map[string]string, error)
	ClaimWork(ctx context.Context, workID, ownerID string, lease time.Duration) (demiurge.WorkItem, bool, error)
	TaskCompletion(ctx context.Context, taskID string) (demiurge.WorkItem, bool, error)
	// The queue: claims are leases on queued rows; starting a claimed
	// task is its task.started event.
	ClaimQueuedTasks(ctx context.Context, hostID string, shared bool, kinds []string, limit int, lease time.Duration) ([]string, error)
	StartClaimedTasks(ctx context.Context, hostID string, ids []string) ([]demiurge.StartedTask, error)
	ReleaseTaskClaims(ctx context.Context, hostID string, ids []string) error
}

// Runner runs one task. It returns when the work is done or ctx is
// cancelled (Cancel, Close); a non-nil error fails the task with the
// error's public message (demiurge.ErrorMessage: an uncoded error shows as
// "internal error"). A Runner must not keep using h after it returned.
type Runner func(ctx context.Context, t demiurge.Task, h *Handle) (demiurge.TaskResult, error)

// Completion is one task.completion work item handed to the OnCompletion
// function, claimed under a lease.
type Completion struct {
	WorkID    string
	TaskID    string
	SessionID string
	Task      demiurge.Task
	Summary   string
	ClaimID   string
	// Payload is the task.completion_ready payload: task_id, kind,
	// owner_session_id, owner_turn_id, source_tool, status, summary,
	// log_tail, result_ref, metadata, origin_scope.
	Payload map[string]any
}

// Worker defaults.
const (
	DefaultCancelPoll  = 250 * time.Millisecond
	DefaultCancelGrace = 5 * time.Second
)

// Timing of the worker's own loops.
const (
	logFlushInterval  = 100 * time.Millisecond
	logFlushLines     = 64
	maxPendingLogSize = 4 << 20 // bytes of unflushed log text kept per task
	completionPoll    = 500 * time.Millisecond
	completionLease   = 30 * time.Second
	completionSlots   = 8
	maxCompletionTry  = 20
	writeTimeout      = 30 * time.Second
)

// ShutdownReason is the summary of the tasks Close cancels.
const ShutdownReason = "task cancelled: host shutting down"

// WorkerOptions configures a Worker.
type WorkerOptions struct {
	// HostID is the host_id of this Host process (store.Host.ID): tasks are
	// stamped with it, so restart reconciliation and cancel requests find
	// their owner. Required.
	HostID string
	// Now stamps log lines and completion retries. Default time.Now.
	Now func() time.Time
	// CancelPoll is how often cancel requests from other processes are
	// read. Default DefaultCancelPoll.
	CancelPoll time.Duration
	// CancelGrace is how long a cancelled runner may take to return before
	// its task is ended without its result. Default DefaultCancelGrace.
	CancelGrace time.Duration
	// MaxLogLines is the retention of each task's log. Default
	// DefaultMaxLogLines.
	MaxLogLines int
	// Logger receives background failures. Default: discard.
	Logger *slog.Logger
	// MaxActive bounds the tasks this worker runs at once: past it Submit
	// queues the task (for this Host, or for any Host when the kind is
	// schedule.fire) and the queue loop starts it when room frees up.
	// 0: Submit always runs at once, and at most DefaultQueueRuns queued
	// tasks run at a time.
	MaxActive int
	// QueuePoll is how often the queue is read without a wake-up. Default
	// DefaultQueuePoll.
	QueuePoll time.Duration
	// OwnQueueOnly keeps the worker from taking tasks queued for any
	// Host: it starts only what was queued for its own Host. A Host that
	// lives for one command (`demiurge run`, a listing) sets it: a shared
	// task it took would be cancelled when the command ends, instead of
	// running on a Host that stays.
	OwnQueueOnly bool
	// Subscribe, when set, delivers the store's wake-ups (a task queued,
	// a cancel requested for this Host), so the worker acts on them at
	// once instead of at its next poll.
	Subscribe func(topic string) (<-chan struct{}, func())
}

// Worker is the RuntimeTaskWorker: it runs tasks
// on goroutines it owns and keeps only their cancel functions and log
// buffers in memory; everything a reader sees is in the store.
type Worker struct {
	cp   *ControlPlane
	st   WorkerStore
	opts WorkerOptions
	log  *slog.Logger

	mu         sync.Mutex // guards runners, onComplete, runs, holds, started, closed, took
	runners    map[string]Runner
	onComplete func(ctx context.Context, c Completion) error
	runs       map[string]*run
	holds      map[string]int // consuming waiters per task (WaitConsume)
	started    bool
	closed     bool
	// took is set once a task was submitted through this worker or
	// claimed to run here: only then has Close completions of its own to
	// announce.
	took bool

	// Set by Start, read-only afterwards.
	bg   context.Context // outlives Close's cancellation: runs and their final writes
	ctx  context.Context // the loops' lifetime, cancelled by Close
	stop context.CancelFunc

	tasks sync.WaitGroup // run goroutines and cancel watchdogs
	loops sync.WaitGroup // flusher, cancel poll, completion loop and handlers, queue loop

	writes    chan *writeReq     // task appends for the committer (unbuffered)
	wake      chan struct{}      // wakes the completion loop (capacity 1)
	freed     chan struct{}      // a run ended: room for the queue loop (capacity 1)
	drain     chan chan struct{} // Close's request to deliver what is due
	flushKick chan struct{}      // wakes the log flusher (capacity 1)
	slots     chan struct{}      // completion handlers in flight

	logMu sync.Mutex // guards dirty
	dirty map[*Handle]struct{}
}

// NewWorker returns a Worker over cp and st. Register runners with Handle,
// then call Start.
func NewWorker(cp *ControlPlane, st WorkerStore, opts WorkerOptions) *Worker {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CancelPoll <= 0 {
		opts.CancelPoll = DefaultCancelPoll
	}
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = DefaultCancelGrace
	}
	if opts.QueuePoll <= 0 {
		opts.QueuePoll = DefaultQueuePoll
	}
	if opts.MaxLogLines <= 0 {
		opts.MaxLogLines = DefaultMaxLogLines
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Worker{
		cp: cp, st: st, opts: opts, log: opts.Logger,
		runners:   map[string]Runner{},
		runs:      map[string]*run{},
		holds:     map[string]int{},
		writes:    make(chan *writeReq),
		drain:     make(chan chan struct{}),
		wake:      make(chan struct{}, 1),
		freed:     make(chan struct{}, 1),
		flushKick: make(chan struct{}, 1),
		slots:     make(chan struct{}, completionSlots),
		dirty:     map[*Handle]struct{}{},
	}
}

// Handle registers the runner of task kind, replacing any earlier one.
// Submissions of a kind without a runner are refused.
func (w *Worker) Handle(kind string, r Runner) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runners[kind] = r
}

// OnCompletion sets the function completions are delivered to; call it
// before Start. With none, completions are still written but stay pending
// for another process (or a later start) to claim. An error from fn
// schedules a retry with backoff; a nil return acknowledges the completion.
func (w *Worker) OnCompletion(fn func(ctx context.Context, c Completion) error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onComplete = fn
}

// Start emits the completions that terminal tasks are missing (a crash
// between a task's end and its completion, a task lost by restart
// reconciliation) and starts the worker's goroutines: the committer of
// task events, the log flusher, the cancel-request poll, the completion
// loop and the queue loop. Close stops them. It fails
// with EINVALID without a HostID or when called twice.
func (w *Worker) Start(ctx context.Context) error {
	if w.opts.HostID == "" {
		return demiurge.Errorf(demiurge.EINVALID, "task worker needs a host id")
	}
	w.mu.Lock()
	if w.started || w.closed {
		w.mu.Unlock()
		return demiurge.Errorf(demiurge.EINVALID, "task worker already started or closed")
	}
	w.started = true
	w.bg = context.WithoutCancel(ctx)
	w.ctx, w.stop = context.WithCancel(w.bg)
	w.mu.Unlock()

	if err := w.emitMissingCompletions(ctx); err != nil {
		w.stop()
		return err
	}
	w.loops.Add(5)
	go w.commitLoop()
	go w.flushLoop()
	go w.cancelLoop()
	go w.completionLoop()
	go w.queueLoop()
	return nil
}

// Active returns the ids of the tasks this worker is running.
func (w *Worker) Active() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.runs))
	for id, r := range w.runs {
		if r.isLaunched() {
			out = append(out, id)
		}
	}
	return out
}

// Close shuts the worker down in order: admission closes first (Submit
// fails with EUNAVAILABLE "task admission is closed"), every active task is
// cancelled (summary ShutdownReason) and awaited, the completions due at
// that moment are delivered (with an OnCompletion function) when a task was
// submitted through the worker or claimed by it, then the loops stop after
// a last log flush. It returns ETIMEOUT/ECANCELED when ctx ends first; the
// goroutines of runners that ignore their context are then still running.
// Close may be called more than once.
func (w *Worker) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	started, took := w.started, w.took
	runs := make([]*run, 0, len(w.runs))
	for _, r := range w.runs {
		runs = append(runs, r)
	}
	w.mu.Unlock()
	if !started {
		return nil
	}
	for _, r := range runs {
		select {
		case <-r.ready:
		case <-ctx.Done():
			return ctxError(ctx, "task worker close")
		}
		if r.isLaunched() {
			w.requestCancel(r, ShutdownReason)
		}
	}
	err := waitCtx(ctx, &w.tasks)
	if err == nil && took {
		// Deliver the completions due now, among them those of the tasks
		// just ended, so a short-lived Host announces what it ran. A
		// worker that took no task leaves what is due to the next
		// completion loop of any Host, which claims it as it starts.
		done := make(chan struct{})
		select {
		case w.drain <- done:
			select {
			case <-done:
			case <-ctx.Done():
				err = ctxError(ctx, "task worker close")
			}
		case <-w.ctx.Done(): // an earlier Close stopped the loops
		case <-ctx.Done():
			err = ctxError(ctx, "task worker close")
		}
	}
	// The loops stop even when a runner outlived ctx: its run then writes
	// its end directly when it returns.
	w.stop()
	if lerr := waitCtx(context.WithoutCancel(ctx), &w.loops); err == nil {
		err = lerr
	}
	return err
}

// waitCtx waits for wg or the end of ctx.
func waitCtx(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctxError(ctx, "task worker close")
	}
}

// ctxError codes ctx's error: ETIMEOUT for a passed deadline, else
// ECANCELED.
func ctxError(ctx context.Context, what string) error {
	if ctx.Err() == context.DeadlineExceeded {
		return demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "%s: deadline exceeded", what)
	}
	return demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "%s: cancelled", what)
}

// writeCtx is the context of a write the worker must finish whatever its
// caller does (a task's terminal event, a completion's acknowledgement).
func (w *Worker) writeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(w.bg, writeTimeout)
}

// signal does a non-blocking send on a wake-up channel.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
