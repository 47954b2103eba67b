package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/demiurge/demiurge"
)

// Store is what the delivery runtime needs of the RuntimeStore port;
// *store.DB implements it (asserted in the tests, so that this package
// does not import the adapter).
type Store interface {
	Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error)
	Session(ctx context.Context, id string) (demiurge.Session, error)
	Delivery(ctx context.Context, id string) (demiurge.Delivery, error)
	Deliveries(ctx context.Context, f demiurge.DeliveryFilter) ([]demiurge.Delivery, error)
	ClaimDueWork(ctx context.Context, kind, ownerID string, lease time.Duration, limit int) ([]demiurge.WorkItem, error)
	// StartDeliverySend claims the delivery's work item (or uses claimID,
	// a claim of ClaimDueWork) and moves it and the outbox row to sending
	// in one transaction; started reports whether it did.
	StartDeliverySend(ctx context.Context, deliveryID, claimID, ownerID, hostID string, lease time.Duration) (demiurge.Delivery, demiurge.WorkItem, bool, error)
	// AppendBatches appends batches in one transaction, each as Append
	// would, all or nothing.
	AppendBatches(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error)
	// FinishDeliverySend records the outcome (sent, unrouted, failed,
	// unknown, or queued for a retry at retryAt) of a started send in one
	// transaction; ECONFLICT when claimID no longer holds it.
	FinishDeliverySend(ctx context.Context, deliveryID, claimID, status, lastError string, retryAt time.Time) (demiurge.Delivery, error)
}

// Dispatch facts.
const (
	// OwnerID is the claim owner of delivery work.
	OwnerID = "host.delivery_runtime"
	// WorkKind is the durable work kind of a delivery; its work_id is the
	// delivery_id.
	WorkKind = demiurge.WorkKindDeliverySend
	// NoInteractiveRoute is the last_error of an unrouted delivery.
	NoInteractiveRoute = "no_interactive_route"
	// NotVisible is the last_error of an invisible (history-only) delivery:
	// there was nothing to show.
	NotVisible = "not_visible"
	// Cancelled is the last_error of a delivery whose dispatch was cancelled.
	Cancelled = "delivery cancelled"
	// TimedOut is the last_error of a delivery whose route did not answer
	// within Options.SendTimeout. Its status is unknown: the route had the
	// outbound and may have shown it.
	TimedOut = "delivery timed out: the route may have delivered it"
)

// Defaults of Options.
const (
	DefaultLease        = 60 * time.Second
	DefaultSendTimeout  = 30 * time.Second
	DefaultMaxAttempts  = 5
	DefaultRetryBase    = time.Second
	DefaultRetryMax     = time.Minute
	DefaultHandoff      = time.Minute
	DefaultPollInterval = time.Second
)

// recordTimeout bounds the durable writes that finish a dispatch after the
// caller's context has ended.
const recordTimeout = 10 * time.Second

// Options configures a Runtime. Zero values take the defaults.
type Options struct {
	// Now is the clock stamped on appended events and used for retry and
	// handoff times; time.Now when nil.
	Now func() time.Time
	// Lease is the claim lease of delivery work (DefaultLease). It is
	// raised to at least SendTimeout plus the time allowed for recording
	// the outcome, so that a live send is never taken for an expired one.
	Lease time.Duration
	// HostID names this Host on the deliveries it sends, so that restart
	// reconciliation can tell a send of a live Host from one left behind by
	// a gone Host. Empty: the host of the delivery's turn is used.
	HostID string
	// SendTimeout bounds one route call (DefaultSendTimeout). A route that
	// has not answered by then leaves its delivery unknown (TimedOut).
	SendTimeout time.Duration
	// MaxAttempts is how many times a delivery is tried when its route
	// fails transiently (DefaultMaxAttempts); the last failure is final.
	MaxAttempts int
	// RetryBase and RetryMax shape the backoff between attempts:
	// RetryBase·2^(n-1) after attempt n, at most RetryMax, jittered down
	// by up to half (DefaultRetryBase, DefaultRetryMax).
	RetryBase, RetryMax time.Duration
	// Handoff is how long a freshly enqueued delivery is left to the caller
	// that enqueued it (which dispatches it under its turn's route) before
	// Run may take it up (DefaultHandoff).
	Handoff time.Duration
	// PollInterval is how often Run looks for due work (DefaultPollInterval).
	PollInterval time.Duration
	// Logger receives the store failures Run cannot return; discarded when nil.
	Logger *slog.Logger
}

// Runtime is the DeliveryRuntime: it records delivery intents in the outbox
// and dispatches them to live routes. It is safe for concurrent use; the
// store's claims make sure that one delivery is sent by one dispatcher at
// most once. Its only state is the count of route calls in flight (Wait).
type Runtime struct {
	st     Store
	router *Router
	opts   Options
	calls  inflight
}

// NewRuntime returns a Runtime over st that sends through router (a nil
// router has no routes: every visible delivery is unrouted).
func NewRuntime(st Store, router *Router, opts Options) *Runtime {
	if router == nil {
		router = NewRouter()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = DefaultSendTimeout
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	opts.Lease = max(opts.Lease, opts.SendTimeout+recordTimeout)
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = DefaultRetryBase
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = DefaultRetryMax
	}
	if opts.Handoff <= 0 {
		opts.Handoff = DefaultHandoff
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runtime{st: st, router: router, opts: opts}
}

// actor names the delivery runtime on the events it appends.
var actor = map[string]any{"kind": "host", "component": "delivery_runtime"}

// event is the event of p on the aggregate (agg, id), stamped with the
// runtime's clock and actor.
func (rt *Runtime) event(agg, id string, p demiurge.EventPayload) demiurge.Event {
	ev := demiurge.NewEvent(agg, id, p)
	ev.CreatedAt, ev.Actor = rt.opts.Now().UTC(), actor
	return ev
}
