package gateway

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// Store is what the gateway needs of the runtime store. It is safe for
// concurrent use.
type Store interface {
	AcceptInbound(ctx context.Context, envs []demiurge.InboundEnvelope, cursor *demiurge.ChannelCursor) ([]demiurge.InboxReceipt, error)
	// AcceptInboundGroups commits, in one transaction, the envelope groups
	// next returns once the transaction has begun (a group commit), and
	// answers each group.
	AcceptInboundGroups(ctx context.Context, next func() [][]demiurge.InboundEnvelope) ([][]demiurge.InboxReceipt, []error, error)
	ClaimInbounds(ctx context.Context, hostID string, limit int, skip map[string]bool) ([]demiurge.Inbound, error)
	StartInbound(ctx context.Context, id, claimID, turnID string) error
	CompleteInbound(ctx context.Context, id, claimID, result, sessionID, turnID string) error
	RetryInbound(ctx context.Context, id, claimID, reason string, next time.Time) error
	DeadLetterInbound(ctx context.Context, id, claimID, reason string) error
	CancelQueuedInbounds(ctx context.Context, coreID, channel, conversationKey, before string) (int, error)
	AcquireChannel(ctx context.Context, st demiurge.ChannelState, ttl time.Duration) (bool, error)
	ReleaseChannel(ctx context.Context, coreID, channel, hostID, state, lastError string) error
	Channel(ctx context.Context, coreID, channel string) (demiurge.ChannelState, error)
}

// TurnOutcome is what a turn run for an inbound reports.
type TurnOutcome struct {
	SessionID string
	TurnID    string
	Outcome   demiurge.TurnStatus
}

// Runner runs inbounds as turns and answers the channel commands that act
// on sessions. Every method acts in the scope of the inbound's
// conversation, never wider. It is safe for concurrent use.
type Runner interface {
	// RunInbound admits in as a turn with id turnID on its conversation's
	// session, delivers the turn's replies (its deliveries and its final
	// text, or "Turn failed: …") through route, and reports the turn. An
	// error means no turn started.
	RunInbound(ctx context.Context, in demiurge.Inbound, turnID string, route demiurge.Route) (TurnOutcome, error)
	// TurnExists reports whether a turn with id turnID was ever started.
	TurnExists(ctx context.Context, turnID string) (bool, error)
	// NewSession starts a fresh session for the conversation and binds
	// the conversation to it.
	NewSession(ctx context.Context, in demiurge.Inbound) (string, error)
	// Sessions lists the sessions the conversation owns (newest first)
	// and names the one it is bound to.
	Sessions(ctx context.Context, in demiurge.Inbound, limit int) (list []demiurge.Session, current string, err error)
	// Resume binds the conversation to one of its sessions (by id);
	// ENOTFOUND for a session it does not own.
	Resume(ctx context.Context, in demiurge.Inbound, sessionID string) error
}

// Inbox is what a channel adapter hands its messages to. Accept returns
// once the envelopes (and the cursor, if not "") are committed; only then
// may the adapter acknowledge them to the platform. Cursor returns the
// cursor last committed for the channel ("" for none).
type Inbox interface {
	Accept(ctx context.Context, envs []demiurge.InboundEnvelope, cursor string) ([]demiurge.InboxReceipt, error)
	Cursor(ctx context.Context) (string, error)
}

// Channel is one enabled channel of one core, as the composition root
// built it from the core's configuration.
type Channel struct {
	CoreID   string
	Name     string // the configured (normalised) name
	Type     string // telegram, webhook, …
	BusyMode string // interrupt (default) or queue
	// Run receives until ctx ends, handing every message to in. It
	// returns nil once ctx ended and an error when the channel failed; a
	// failed channel is run again after a backoff.
	Run func(ctx context.Context, in Inbox) error
	// Send delivers out to the conversation the inbound to came from. It
	// is called concurrently for different conversations.
	Send func(ctx context.Context, to demiurge.Inbound, out demiurge.Outbound) error
}

func (c Channel) key() string { return c.CoreID + "\x00" + c.Name }

// Options configure a Gateway. Zero values take the defaults.
type Options struct {
	HostID string // this Host's lease id (required)
	Logger *slog.Logger
	// Redact scrubs known secrets (channel tokens, passwords, provider
	// keys) from an error text before it is logged or stored.
	Redact func(string) string
	// MaxAttempts is how many admissions of one inbound are tried before
	// it is dead-lettered (default 5).
	MaxAttempts int
	// RetryBase and RetryMax bound the admission backoff (default 2 s, 5 min).
	RetryBase, RetryMax time.Duration
	// MaxConcurrent bounds the turns running at once (default 16).
	MaxConcurrent int
	// Subscribe, when set, delivers the store's wake-ups: the worker
	// looks for due inbounds at once when any Host accepted one.
	Subscribe func(topic string) (<-chan struct{}, func())
	// Poll is how often the worker looks for due inbounds when nothing
	// woke it (default 250 ms).
	Poll time.Duration
	// LeaseTTL is a channel's poller lease (default 30 s, renewed every
	// third of it).
	LeaseTTL time.Duration
	// ChannelBackoff bounds the restart backoff of a failed channel
	// (default 1 s doubling to 60 s).
	ChannelBackoff, ChannelBackoffMax time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Gateway runs the channels and the inbox worker. Create it with New, start
// it with Start, stop it with Close.
type Gateway struct {
	st       Store
	run      Runner
	opts     Options
	channels []Channel
	byKey    map[string]Channel

	ctx    context.Context // the channels' and the worker's lifetime
	cancel context.CancelFunc
	turns  context.Context // the running turns' lifetime: cancelled when the drain ends
	stop   context.CancelFunc
	wg     sync.WaitGroup // the supervisors and the worker loop
	active sync.WaitGroup // the inbounds being handled
	wake   chan struct{}
	group  *acceptGroup // the channels' cursor-less accepts, group-committed

	mu      sync.Mutex // guards running, stops, started, closed
	running map[string]*running
	stops   map[string]*stopOutcome // by stopKey: what a /stop accepted here did
	started bool
	closed  bool
}

// running is one inbound being handled in this process.
type running struct {
	inboundID string
	cancel    context.CancelFunc
}

// New returns a Gateway over channels. It starts nothing.
func New(st Store, run Runner, channels []Channel, opts Options) (*Gateway, error) {
	if opts.HostID == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "gateway requires a host id")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = 2 * time.Second
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 5 * time.Minute
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 16
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.ChannelBackoff <= 0 {
		opts.ChannelBackoff = time.Second
	}
	if opts.ChannelBackoffMax <= 0 {
		opts.ChannelBackoffMax = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &Gateway{st: st, run: run, opts: opts, byKey: map[string]Channel{}, running: map[string]*running{}, stops: map[string]*stopOutcome{}, wake: make(chan struct{}, 1), group: &acceptGroup{st: st}}
	for _, c := range channels {
		if c.CoreID == "" || c.Name == "" || c.Run == nil || c.Send == nil {
			return nil, demiurge.Errorf(demiurge.EINVALID, "gateway channel %q of core %q is incomplete", c.Name, c.CoreID)
		}
		if c.BusyMode == "" {
			c.BusyMode = "interrupt"
		}
		if _, dup := g.byKey[c.key()]; dup {
			return nil, demiurge.Errorf(demiurge.EINVALID, "gateway channel %q of core %q is given twice", c.Name, c.CoreID)
		}
		g.byKey[c.key()] = c
		g.channels = append(g.channels, c)
	}
	return g, nil
}

// Start runs every channel under its supervisor and the inbox worker. The
// inbox worker also admits inbounds of channels this gateway does not run
// (a channel another gateway polls): their replies are sent by the channel
// of the same core and name when this gateway has it, and recorded as
// unrouted otherwise.
func (g *Gateway) Start() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started || g.closed {
		return
	}
	g.started = true
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.turns, g.stop = context.WithCancel(context.Background())
	for _, c := range g.channels {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.supervise(g.ctx, c)
		}()
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.work(g.ctx)
	}()
}

// Close stops the channels (no new message is accepted) and the worker (no
// inbound is claimed), then waits for the inbounds being handled until ctx
// ends — the drain — and cancels the turns still running after that. It
// returns once every goroutine of the gateway ended. Closing twice is
// harmless.
func (g *Gateway) Close(ctx context.Context) error {
	g.mu.Lock()
	if g.closed || !g.started {
		g.closed = true
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
	drained := make(chan struct{})
	go func() {
		g.active.Wait()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = ctx.Err()
		g.opts.Logger.Warn("gateway drain timed out: cancelling the turns still running")
	}
	g.stop()
	<-drained
	return err
}

// Channels returns the channels the gateway runs.
func (g *Gateway) Channels() []Channel { return append([]Channel(nil), g.channels...) }

// notify wakes the worker.
func (g *Gateway) notify() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// redact is err's text with every known secret scrubbed: the coded
// message of a demiurge error, else the error's own text (adapters return
// errors whose text names no credential; Redact is the second guard).
func (g *Gateway) redact(err error) string {
	if err == nil {
		return ""
	}
	var e *demiurge.Error
	if errors.As(err, &e) {
		return g.opts.Redact(e.Error())
	}
	return g.opts.Redact(err.Error())
}
