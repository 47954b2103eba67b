package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// channelInbox is the Inbox of one channel.
type channelInbox struct {
	g *Gateway
	c Channel
}

// Accept commits envs under their dedup keys, with cursor when given, and
// applies the conversation's busy mode to each new message.
func (in channelInbox) Accept(ctx context.Context, envs []demiurge.InboundEnvelope, cursor string) ([]demiurge.InboxReceipt, error) {
	for i := range envs {
		envs[i].CoreID, envs[i].Channel = in.c.CoreID, in.c.Name
	}
	var cur *demiurge.ChannelCursor
	if cursor != "" {
		cur = &demiurge.ChannelCursor{CoreID: in.c.CoreID, Channel: in.c.Name, HostID: in.g.opts.HostID, Cursor: cursor}
	}
	// A /stop's answer must be waited for before the worker can claim it,
	// which it may do as soon as the envelope is committed.
	stops := make([]*stopOutcome, len(envs))
	for i, e := range envs {
		if cmd, _ := commandOf(e.Text); cmd == "stop" {
			stops[i] = in.g.expectStop(e)
		}
	}
	var receipts []demiurge.InboxReceipt
	var err error
	if cur == nil {
		receipts, err = in.g.group.accept(ctx, envs)
	} else {
		// A poller's cursor is committed with its own batch; the pollers
		// accept one batch at a time and gain nothing from a group.
		receipts, err = in.g.st.AcceptInbound(ctx, envs, cur)
	}
	if err != nil {
		for i, s := range stops {
			in.g.forgetStop(envs[i], s)
		}
		return nil, err
	}
	wake := false
	for i, r := range receipts {
		if r.Duplicate {
			in.g.forgetStop(envs[i], stops[i])
			continue
		}
		if in.g.busy(ctx, in.c, envs[i], r.InboundID, stops[i]) {
			wake = true
		}
	}
	if wake {
		in.g.notify()
	}
	return receipts, nil
}

func (in channelInbox) Cursor(ctx context.Context) (string, error) {
	st, err := in.g.st.Channel(ctx, in.c.CoreID, in.c.Name)
	if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
		return "", nil
	}
	return st.Cursor, err
}

// busy applies the busy mode to a new message of a conversation whose
// turn runs in this process: interrupt cancels the turn (a command never
// does). /stop, in both modes, ends the messages queued before it and
// cancels the running turn; stop (its outcome, expected since before the
// message was committed) records what it did for its answer. It reports
// whether the worker should look for the message now: not while its
// conversation is being handled here, whose end wakes the worker anyway
// (a claim then would find nothing of it and still cost a write).
func (g *Gateway) busy(ctx context.Context, c Channel, env demiurge.InboundEnvelope, inboundID string, stop *stopOutcome) (wake bool) {
	slot := slotOf(c.CoreID, c.Name, env.ConversationKey)
	if stop != nil {
		// The queue is cleared first, then the turn running now is
		// cancelled: cancelled first, its end would let the worker start
		// the next queued message. The /stop is committed, so a platform
		// that hung up meanwhile does not undo the clear.
		n, err := g.st.CancelQueuedInbounds(context.WithoutCancel(ctx), c.CoreID, c.Name, env.ConversationKey, inboundID)
		if err != nil {
			g.opts.Logger.Warn("clear queued inbounds", "channel", c.Name, "err", g.redact(err))
		}
		r := g.runningBefore(slot, inboundID)
		g.settleStop(stop, r != nil, n)
		if r != nil {
			r.cancel()
		}
		return r == nil
	}
	r := g.runningBefore(slot, inboundID)
	if cmd, _ := commandOf(env.Text); r != nil && cmd == "" && c.BusyMode == "interrupt" {
		r.cancel()
	}
	return r == nil
}

// runningBefore is the inbound handled here for slot, unless it is the
// message inboundID itself (the worker may claim a message as soon as it
// is committed).
func (g *Gateway) runningBefore(slot, inboundID string) *running {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.running[slot]
	if r != nil && r.inboundID == inboundID {
		return nil
	}
	return r
}

// stopOutcome is what a /stop did; its fields are set, under g.mu, before
// done closes. refs counts the accepts that expect it and have not
// settled it.
type stopOutcome struct {
	done    chan struct{}
	refs    int
	settled bool
	turn    bool
	cleared int
}

func stopKey(e demiurge.InboundEnvelope) string {
	return e.CoreID + "\x00" + e.Channel + "\x00" + e.EventKey
}

// expectStop registers the outcome of the /stop envelope e before it is
// committed; a platform's redelivery of a /stop still pending shares it.
func (g *Gateway) expectStop(e demiurge.InboundEnvelope) *stopOutcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.stops[stopKey(e)]
	if !ok {
		s = &stopOutcome{done: make(chan struct{})}
		g.stops[stopKey(e)] = s
	}
	s.refs++
	return s
}

// settleStop records what the accept that committed a /stop did.
func (g *Gateway) settleStop(s *stopOutcome, turn bool, cleared int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s.refs--
	if !s.settled {
		s.settled, s.turn, s.cleared = true, turn, cleared
		close(s.done)
	}
}

// forgetStop releases an accept's expectation of the /stop e when that
// accept did not commit it as a new message (it failed, or e was a
// redelivery). Once no accept is left to settle it, the outcome is
// settled as "stopped nothing here": whoever waits for it (the worker
// that claimed an earlier commit of e) must not wait forever.
func (g *Gateway) forgetStop(e demiurge.InboundEnvelope, s *stopOutcome) {
	if s == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s.refs--
	if s.refs > 0 || s.settled {
		return
	}
	s.settled = true
	close(s.done)
	if g.stops[stopKey(e)] == s {
		delete(g.stops, stopKey(e))
	}
}

// takeStop returns what the /stop inbound in did, waiting for the accept
// that committed it here to record it; a /stop this process did not
// accept stopped nothing here. The wait ends with ctx or the gateway's
// turns.
func (g *Gateway) takeStop(ctx context.Context, in demiurge.Inbound) stopOutcome {
	g.mu.Lock()
	s := g.stops[stopKey(in.InboundEnvelope)]
	delete(g.stops, stopKey(in.InboundEnvelope))
	g.mu.Unlock()
	if s == nil {
		return stopOutcome{}
	}
	select {
	case <-s.done:
		g.mu.Lock()
		defer g.mu.Unlock()
		return stopOutcome{turn: s.turn, cleared: s.cleared}
	case <-ctx.Done():
	case <-g.turns.Done():
	}
	return stopOutcome{}
}

// supervise runs c until ctx ends: under the channel's poller lease,
// renewed while it runs; a failed run is recorded (state retrying, the
// redacted error) and started again after a backoff of its own.
func (g *Gateway) supervise(ctx context.Context, c Channel) {
	failures := 0
	lastErr := ""
	state := demiurge.ChannelState{CoreID: c.CoreID, Channel: c.Name, Type: c.Type, HostID: g.opts.HostID}
	for ctx.Err() == nil {
		state.State, state.LastError = demiurge.ChannelRunning, lastErr
		ok, err := g.st.AcquireChannel(ctx, state, g.opts.LeaseTTL)
		if err != nil || !ok {
			if err != nil && ctx.Err() == nil {
				g.opts.Logger.Warn("channel lease", "core_id", c.CoreID, "channel", c.Name, "err", g.redact(err))
			}
			// Another gateway runs this channel (or the store is busy):
			// look again once its lease could have lapsed.
			sleep(ctx, g.opts.LeaseTTL/2)
			continue
		}
		began := g.opts.Now()
		err = g.runLeased(ctx, c, state)
		if ctx.Err() != nil {
			break
		}
		if err == nil {
			err = demiurge.Errorf(demiurge.EUNAVAILABLE, "channel %s stopped on its own", c.Name)
		}
		if g.opts.Now().Sub(began) > 2*g.opts.ChannelBackoffMax {
			failures = 0 // it ran well for a while: start the backoff again
		}
		failures++
		lastErr = g.redact(err)
		g.opts.Logger.Warn("channel failed; retrying", "core_id", c.CoreID, "channel", c.Name, "failures", failures, "err", lastErr)
		state.State, state.LastError = demiurge.ChannelRetrying, lastErr
		if _, err := g.st.AcquireChannel(ctx, state, g.opts.LeaseTTL); err != nil && ctx.Err() == nil {
			g.opts.Logger.Warn("record channel state", "channel", c.Name, "err", g.redact(err))
		}
		sleep(ctx, backoff(g.opts.ChannelBackoff, g.opts.ChannelBackoffMax, failures))
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.st.ReleaseChannel(rctx, c.CoreID, c.Name, g.opts.HostID, demiurge.ChannelStopped, lastErr); err != nil {
		g.opts.Logger.Warn("release channel", "channel", c.Name, "err", g.redact(err))
	}
}

// runLeased runs c once, renewing its lease every third of the TTL; a
// lease lost to another gateway stops the run.
func (g *Gateway) runLeased(ctx context.Context, c Channel, state demiurge.ChannelState) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(g.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				ok, err := g.st.AcquireChannel(runCtx, state, g.opts.LeaseTTL)
				if err == nil && !ok {
					g.opts.Logger.Warn("channel lease lost to another gateway", "core_id", c.CoreID, "channel", c.Name)
					cancel()
					return
				}
			}
		}
	}()
	err := c.Run(runCtx, channelInbox{g: g, c: c})
	cancel()
	<-renewed
	if err == nil && ctx.Err() == nil && runCtx.Err() != nil {
		return demiurge.Errorf(demiurge.ECONFLICT, "channel %s: another gateway took its poller lease", c.Name)
	}
	return err
}

// backoff is base·2^(n-1), capped at max.
func backoff(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func slotOf(coreID, channel, conversationKey string) string {
	return coreID + "\x00" + channel + "\x00" + conversationKey
}

// commandOf splits a channel command: "/resume 2" → ("resume", "2"); not a
// command → ("", text). A "/cmd@bot" suffix is dropped.
func commandOf(text string) (string, string) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") || len(t) < 2 {
		return "", text
	}
	name, rest, _ := strings.Cut(t[1:], " ")
	name, _, _ = strings.Cut(name, "@")
	name = strings.ToLower(name)
	if name == "" || strings.ContainsAny(name, "/\n\t") {
		return "", text
	}
	return name, strings.TrimSpace(rest)
}
