package delivery

import (
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// Store is what the delivery runtime needs of the RuntimeStore port;
// *store.DB implements it (asserted in the tests, so that this package
// does not import the adapter).
type Store interface {
	Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error)
	LastSeq(ctx context.Context, aggType, aggID string) (int64, error)
	Session(ctx context.Context, id string) (demiurge.Session, error)
	Delivery(ctx context.Context, id string) (demiurge.Delivery, error)
	Deliveries(ctx context.Context, f demiurge.DeliveryFilter) ([]demiurge.Delivery, error)
	WorkItem(ctx context.Context, id string) (demiurge.WorkItem, error)
	ClaimWork(ctx context.Context, workID, ownerID string, lease time.Duration) (demiurge.WorkItem, bool, error)
	TransitionWork(ctx context.Context, workID, claimID, toStatus string, f demiurge.WorkFields) (demiurge.WorkItem, error)
}

// Dispatch facts (spec host-runtime §5.5).
const (
	// OwnerID is the claim owner of delivery work.
	OwnerID = "host.delivery_runtime"
	// WorkKind is the durable work kind of a delivery; its work_id is the
	// delivery_id.
	WorkKind = demiurge.WorkKindDeliverySend
	// DefaultLease is how long a claim on delivery work holds.
	DefaultLease = 60 * time.Second
	// NoInteractiveRoute is the last_error of an unrouted delivery.
	NoInteractiveRoute = "no_interactive_route"
	// NotVisible is the last_error of an invisible (history-only) delivery:
	// there was nothing to show.
	NotVisible = "not_visible"
	// Cancelled is the last_error of a delivery whose dispatch was cancelled.
	Cancelled = "delivery cancelled"
)

// recordTimeout bounds the durable writes that finish a dispatch after the
// caller's context has ended.
const recordTimeout = 10 * time.Second

// Options configures a Runtime.
type Options struct {
	// Now is the clock stamped on appended events; time.Now when nil.
	Now func() time.Time
	// Lease is the claim lease of delivery work; DefaultLease when zero.
	Lease time.Duration
	// HostID names this Host on the deliveries it sends, so that restart
	// reconciliation can tell a send of a live Host from one left behind by
	// a gone Host. Empty: the host of the delivery's turn is used.
	HostID string
}

// Runtime is the DeliveryRuntime: it records delivery intents in the outbox
// and dispatches them to live routes. It keeps no state of its own and is
// safe for concurrent use; the store's claims make sure that one delivery is
// sent by one dispatcher at most once.
type Runtime struct {
	st     Store
	router *Router
	now    func() time.Time
	lease  time.Duration
	hostID string
}

// NewRuntime returns a Runtime over st that sends through router (a nil
// router has no routes: every visible delivery is unrouted).
func NewRuntime(st Store, router *Router, opts Options) *Runtime {
	if router == nil {
		router = NewRouter()
	}
	rt := &Runtime{st: st, router: router, now: opts.Now, lease: opts.Lease, hostID: opts.HostID}
	if rt.now == nil {
		rt.now = time.Now
	}
	if rt.lease <= 0 {
		rt.lease = DefaultLease
	}
	return rt
}

// actor names the delivery runtime on the events it appends.
var actor = map[string]any{"kind": "host", "component": "delivery_runtime"}

func (rt *Runtime) event(agg, id, typ string, payload map[string]any) demiurge.Event {
	return demiurge.Event{
		AggregateType: agg,
		AggregateID:   id,
		Type:          typ,
		CreatedAt:     rt.now().UTC(),
		Actor:         actor,
		Payload:       payload,
	}
}
