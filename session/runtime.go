package session

import (
	"context"
	"log/slog"
	"time"

	"github.com/demiurge/demiurge"
)

// Store is what the session runtime needs of the RuntimeStore port;
// *store.DB implements it (asserted in the tests, so that this package
// does not import the adapter).
type Store interface {
	Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error)
	AppendBatches(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error)
	Session(ctx context.Context, id string) (demiurge.Session, error)
	SessionOwned(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Session, error)
	ListSessions(ctx context.Context, f demiurge.SessionFilter) ([]demiurge.Session, error)
	SessionBinding(ctx context.Context, coreID, channel, key string) (string, bool, error)
	BoundSession(ctx context.Context, coreID, channel, key string) (demiurge.Session, bool, error)
	RecentMessages(ctx context.Context, sessionID string, f demiurge.MessageFilter) ([]demiurge.Message, error)
	Turn(ctx context.Context, id string) (demiurge.Turn, error)
	LastSeq(ctx context.Context, aggType, aggID string) (int64, error)
}

// Options configures a Runtime.
type Options struct {
	// Now is the clock stamped on the events the runtime appends; time.Now
	// when nil.
	Now func() time.Time
	// Logger receives failures that do not fail the call (an audit append
	// that could not be written). Default: discard.
	Logger *slog.Logger
}

// Runtime is the SessionRuntime. It keeps no state of its own: every read and
// write goes to the store, so several Runtimes (and Host processes) may share
// one database. It is safe for concurrent use.
type Runtime struct {
	st      Store
	now     func() time.Time
	log     *slog.Logger
	history historyCache
	// summaries keeps compaction summary texts (compaction.go).
	summaries summaryCache
}

// NewRuntime returns a Runtime over st.
func NewRuntime(st Store, opts Options) *Runtime {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runtime{st: st, now: now, log: log}
}

// actor names the session runtime on the events it appends.
var actor = map[string]any{"kind": "host", "component": "session_runtime"}

// event is the event of p on the aggregate (agg, id), stamped with the
// runtime's clock and actor.
func (r *Runtime) event(agg, id string, p demiurge.EventPayload) demiurge.Event {
	ev := demiurge.NewEvent(agg, id, p)
	ev.CreatedAt, ev.Actor = r.now().UTC(), actor
	return ev
}

// sessionNotFound is the one answer for a session that is missing or not the
// caller's: the two are never distinguished.
func sessionNotFound(id string, cause error) error {
	return demiurge.WrapError(demiurge.ENOTFOUND, cause, "session not found: %s", id)
}

// session reads a session by id, any owner. Callers that act for a principal
// use owned instead.
func (r *Runtime) session(ctx context.Context, id string) (demiurge.Session, error) {
	s, err := r.st.Session(ctx, id)
	if err != nil {
		if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
			return demiurge.Session{}, sessionNotFound(id, err)
		}
		return demiurge.Session{}, err
	}
	return s, nil
}
