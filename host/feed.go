package host

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/demiurge/demiurge"
)

// The live session feed: the committed events of a session and of the
// background work it owns, handed in process to subscribers (the terminal
// UI). The store tells the feed about every committed transaction while
// anybody subscribes (store.CommitObserver); the feed's own goroutine
// routes the events to the subscriptions, so the store's writer never
// waits for a subscriber, and a subscriber that does not keep up loses
// events (counted) rather than slowing anyone down.

// FeedSource says how a feed item relates to the subscribed session.
type FeedSource string

// Feed sources.
const (
	// FeedSession: an event of the session itself (its turns, messages,
	// tool calls, model steps, deliveries and work items).
	FeedSession FeedSource = "session"
	// FeedTask: a background task the session owns (task.*), its
	// completion notice (task.completion_ready) and acknowledgement.
	FeedTask FeedSource = "task"
	// FeedChild: a child agent the session started, directly or through
	// another child: the delegation trail (agent_spawn.*) and every event
	// of the child's session and of its own background work.
	FeedChild FeedSource = "child"
	// FeedSchedule: a schedule run of the session's core (scheduler.claimed,
	// completed, error); the run itself has a session of its own.
	FeedSchedule FeedSource = "schedule"
)

// FeedItem is one committed event as a subscription sees it.
type FeedItem struct {
	Event demiurge.Event
	// SessionID is the session the event is of: the subscribed one, a
	// child agent's session (FeedChild) or, for FeedSchedule, "".
	SessionID string
	Source    FeedSource
	// Dropped counts the items this subscription lost since the previous
	// item it received, because its buffer was full or the feed's hand-off
	// was: a reader that sees it non-zero re-reads what it shows from the
	// store.
	Dropped uint64
}

// DefaultFeedBuffer is a subscription's buffer when FeedOptions gives none.
const DefaultFeedBuffer = 1024

// FeedOptions qualify Subscribe.
type FeedOptions struct {
	// CoreID is the core whose schedule runs the feed reports (default:
	// the session's core, or the Host's default core for a session that
	// does not exist yet).
	CoreID string
	// Buffer bounds the items waiting for the reader (default
	// DefaultFeedBuffer). When it is full, new items are dropped and
	// counted in the next item's Dropped.
	Buffer int
}

// Feed is one subscription. Read C until it is closed: Close closes it,
// and so does the Host's Close.
type Feed struct {
	hub       *feedHub
	sessionID string
	coreID    string
	ch        chan FeedItem
	// dropped counts lost items not yet reported (guarded by hub.mu).
	dropped uint64
	closed  bool
}

// C delivers the feed's items in commit order.
func (f *Feed) C() <-chan FeedItem { return f.ch }

// SessionID is the subscribed session.
func (f *Feed) SessionID() string { return f.sessionID }

// Close ends the subscription and closes C. It is safe to call from any
// goroutine, more than once, and while C is being read.
func (f *Feed) Close() { f.hub.remove(f) }

// Subscribe starts a live feed of the session's committed events and of
// its background work's (see FeedSource): every event committed after
// Subscribe returned, in commit order, at most once. The session need not
// exist yet (a new session's id may be chosen in advance with
// turn.Request.NewSessionID). It fails only when the Host is closed or the
// session cannot be read.
func (h *Host) Subscribe(ctx context.Context, sessionID string, opts FeedOptions) (*Feed, error) {
	if sessionID == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "subscribe: session id is empty")
	}
	if opts.CoreID == "" {
		s, err := h.store.Session(ctx, sessionID)
		switch {
		case err == nil:
			opts.CoreID = s.CoreID
		case demiurge.ErrorCode(err) == demiurge.ENOTFOUND:
			opts.CoreID = h.DefaultCore()
		default:
			return nil, err
		}
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultFeedBuffer
	}
	return h.feed.add(sessionID, opts)
}

// feedHub routes committed events to the subscriptions. Committed runs on
// the store's committing goroutine and only hands the batch to the hub's
// goroutine; routing (which may read the store) happens there.
type feedHub struct {
	lookup feedLookup

	count atomic.Int32 // open subscriptions: Observing
	in    chan []demiurge.Event
	// ctx ends the hub's goroutine (and the lookups it runs); done is
	// closed when it has returned.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex // guards subs, closed and every Feed's dropped and closed
	subs   map[string][]*Feed
	closed bool

	route feedRoutes // the hub goroutine's own
}

// feedLookup is what routing reads when an event names a turn, a task or
// a session it has not seen begin (a subscription that started mid-way).
type feedLookup struct {
	turnSession func(ctx context.Context, turnID string) (string, error)
	taskOwner   func(ctx context.Context, taskID string) (string, error)
	// parent is the session that started a running child agent ("" for
	// none): the Host's live lineage.
	parent func(sessionID string) string
}

// feedHandoff bounds the committed batches waiting for the hub's
// goroutine; past it, batches are dropped and every subscription is told.
const feedHandoff = 256

func newFeedHub(lookup feedLookup) *feedHub {
	ctx, cancel := context.WithCancel(context.Background())
	return &feedHub{
		lookup: lookup,
		in:     make(chan []demiurge.Event, feedHandoff),
		ctx:    ctx, cancel: cancel,
		done:  make(chan struct{}),
		subs:  map[string][]*Feed{},
		route: newFeedRoutes(),
	}
}

// Observing implements store.CommitObserver.
func (f *feedHub) Observing() bool { return f.count.Load() > 0 }

// Committed implements store.CommitObserver: it never blocks.
func (f *feedHub) Committed(events []demiurge.Event) {
	select {
	case f.in <- events:
	default:
		f.mu.Lock()
		for _, list := range f.subs {
			for _, s := range list {
				s.dropped += uint64(len(events))
			}
		}
		f.mu.Unlock()
	}
}

// start runs the hub's goroutine until close.
func (f *feedHub) start() {
	go func() {
		defer close(f.done)
		for {
			select {
			case <-f.ctx.Done():
				return
			case batch := <-f.in:
				for _, e := range batch {
					f.dispatch(f.ctx, e)
				}
			}
		}
	}()
}

// close stops the hub's goroutine, waits for it and closes every
// subscription.
func (f *feedHub) close(context.Context) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	for id, list := range f.subs {
		for _, s := range list {
			s.closed = true
			close(s.ch)
		}
		delete(f.subs, id)
	}
	f.count.Store(0)
	f.mu.Unlock()
	f.cancel()
	<-f.done
	return nil
}

func (f *feedHub) add(sessionID string, opts FeedOptions) (*Feed, error) {
	s := &Feed{hub: f, sessionID: sessionID, coreID: opts.CoreID, ch: make(chan FeedItem, opts.Buffer)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "subscribe to session %s: the Host is closed", sessionID)
	}
	f.subs[sessionID] = append(f.subs[sessionID], s)
	f.count.Add(1)
	return s, nil
}

func (f *feedHub) remove(s *Feed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.ch)
	list := f.subs[s.sessionID]
	for i, x := range list {
		if x == s {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(f.subs, s.sessionID)
	} else {
		f.subs[s.sessionID] = list
	}
	f.count.Add(-1)
}

// dispatch routes one event: to the subscriptions of the session it is
// of (with its source), then, as FeedChild, to those of each session up
// the child-agent lineage; a schedule event to the subscriptions of its
// core.
func (f *feedHub) dispatch(ctx context.Context, e demiurge.Event) {
	if core, ok := scheduleCore(e); ok {
		f.mu.Lock()
		for _, list := range f.subs {
			for _, s := range list {
				if s.coreID == core {
					f.sendLocked(s, FeedItem{Event: e, Source: FeedSchedule})
				}
			}
		}
		f.mu.Unlock()
		return
	}
	session, source := f.route.of(ctx, f.lookup, e)
	if session == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := 0
	for at := session; at != "" && seen < maxLineage; at, seen = f.route.parentOf(f.lookup, at), seen+1 {
		src := source
		if at != session {
			src = FeedChild
		}
		for _, s := range f.subs[at] {
			f.sendLocked(s, FeedItem{Event: e, SessionID: session, Source: src})
		}
	}
}

// sendLocked hands it to s without waiting; a full buffer drops it.
func (f *feedHub) sendLocked(s *Feed, it FeedItem) {
	it.Dropped = s.dropped
	select {
	case s.ch <- it:
		s.dropped = 0
	default:
		s.dropped++
	}
}

// maxLineage bounds the walk up the child-agent lineage (delegation depth
// is bounded far below it).
const maxLineage = 16
