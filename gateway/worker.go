package gateway

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/demiurge/demiurge"
)

// work claims due inbounds (never two of one conversation, never more than
// MaxConcurrent at once) and handles each on a goroutine of its own, until
// ctx ends: when this gateway accepted one, when a wake-up says any Host
// did, and every Poll.
func (g *Gateway) work(ctx context.Context) {
	var accepted <-chan struct{}
	if g.opts.Subscribe != nil {
		var stop func()
		accepted, stop = g.opts.Subscribe(demiurge.TopicInbox)
		defer stop()
	}
	t := time.NewTicker(g.opts.Poll)
	defer t.Stop()
	for {
		g.claimDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-g.wake:
		case <-accepted:
		case <-t.C:
		}
	}
}

func (g *Gateway) claimDue(ctx context.Context) {
	g.mu.Lock()
	free := g.opts.MaxConcurrent - len(g.running)
	skip := make(map[string]bool, len(g.running))
	for slot := range g.running {
		skip[slot] = true
	}
	g.mu.Unlock()
	if free <= 0 || ctx.Err() != nil {
		return
	}
	claimed, err := g.st.ClaimInbounds(ctx, g.opts.HostID, free, skip)
	if err != nil {
		if ctx.Err() == nil {
			g.opts.Logger.Warn("claim inbounds", "err", g.redact(err))
		}
		return
	}
	for _, in := range claimed {
		turnCtx, cancel := context.WithCancel(g.turns)
		slot := slotOf(in.CoreID, in.Channel, in.ConversationKey)
		g.mu.Lock()
		g.running[slot] = &running{inboundID: in.ID, cancel: cancel}
		g.mu.Unlock()
		g.active.Add(1)
		go func() {
			defer g.active.Done()
			defer func() {
				cancel()
				g.mu.Lock()
				delete(g.running, slot)
				g.mu.Unlock()
				g.notify() // the conversation's next message may be due
			}()
			g.handle(turnCtx, in)
		}()
	}
}

// handle takes one claimed inbound to its end: a command answered, a turn
// run (or one a dead Host started, recovered), a retry or a dead letter.
func (g *Gateway) handle(ctx context.Context, in demiurge.Inbound) {
	// The inbox's own writes outlive a cancelled turn.
	wctx := context.WithoutCancel(ctx)
	log := g.opts.Logger.With("inbound_id", in.ID, "core_id", in.CoreID, "channel", in.Channel)
	if in.TurnID != "" {
		started, err := g.run.TurnExists(wctx, in.TurnID)
		if err != nil {
			g.retry(wctx, in, err)
			return
		}
		if started {
			// A Host that is gone started this turn: it stands, and
			// nothing is run or answered again.
			if err := g.st.CompleteInbound(wctx, in.ID, in.ClaimID, demiurge.InboundResultRecovered, "", in.TurnID); err != nil {
				log.Warn("complete recovered inbound", "err", g.redact(err))
			}
			return
		}
	}
	c, known := g.byKey[in.CoreID+"\x00"+in.Channel]
	if cmd, arg := commandOf(in.Text); cmd != "" {
		switch cmd {
		case "ask", "queue":
			if arg == "" {
				break
			}
			in.Text = arg
			cmd = ""
		}
		if cmd != "" {
			reply := g.command(wctx, in, cmd, arg)
			if known && reply != "" {
				if err := c.Send(wctx, in, demiurge.Outbound{Channel: in.Channel, ConversationKey: in.ConversationKey,
					Kind: demiurge.DeliveryKindMessage, Text: reply, Visible: true}); err != nil {
					log.Warn("channel command reply", "command", cmd, "err", g.redact(err))
				}
			}
			if err := g.st.CompleteInbound(wctx, in.ID, in.ClaimID, demiurge.InboundResultCommand, "", ""); err != nil {
				log.Warn("complete command inbound", "err", g.redact(err))
			}
			return
		}
	}
	turnID := in.TurnID
	if turnID == "" {
		turnID = demiurge.NewID("turn")
		if err := g.st.StartInbound(wctx, in.ID, in.ClaimID, turnID); err != nil {
			log.Warn("reserve inbound turn", "err", g.redact(err))
			return // a stale claim: another Host has it now
		}
	}
	var route demiurge.Route // nil: the replies are recorded as unrouted
	if known {
		route = inboundRoute{c: c, in: in}
	}
	out, err := g.run.RunInbound(ctx, in, turnID, route)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) || demiurge.ErrorCode(err) == demiurge.ECANCELED {
			if err := g.st.CompleteInbound(wctx, in.ID, in.ClaimID, demiurge.InboundResultCancelled, "", ""); err != nil {
				log.Warn("complete cancelled inbound", "err", g.redact(err))
			}
			return
		}
		g.retry(wctx, in, err)
		return
	}
	result := demiurge.InboundResultTurn
	if out.Outcome == demiurge.TurnCancelled {
		result = demiurge.InboundResultCancelled
	}
	if err := g.st.CompleteInbound(wctx, in.ID, in.ClaimID, result, out.SessionID, out.TurnID); err != nil {
		log.Warn("complete inbound", "err", g.redact(err))
	}
}

// retry schedules another admission of in after a backoff with jitter, or
// dead-letters it: after MaxAttempts, or at once for an invalid request,
// which no retry would change.
func (g *Gateway) retry(ctx context.Context, in demiurge.Inbound, cause error) {
	reason := g.redact(cause)
	log := g.opts.Logger.With("inbound_id", in.ID, "core_id", in.CoreID, "channel", in.Channel, "attempts", in.Attempts)
	if in.Attempts >= g.opts.MaxAttempts || demiurge.ErrorCode(cause) == demiurge.EINVALID {
		log.Warn("inbound dead-lettered", "reason", reason)
		if err := g.st.DeadLetterInbound(ctx, in.ID, in.ClaimID, reason); err != nil {
			log.Warn("dead-letter inbound", "err", g.redact(err))
		}
		return
	}
	d := backoff(g.opts.RetryBase, g.opts.RetryMax, in.Attempts)
	d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	log.Info("inbound admission failed; retrying", "in", d.String(), "reason", reason)
	if err := g.st.RetryInbound(ctx, in.ID, in.ClaimID, reason, g.opts.Now().Add(d)); err != nil {
		log.Warn("retry inbound", "err", g.redact(err))
	}
}

// inboundRoute delivers a turn's outbounds to the conversation of in.
type inboundRoute struct {
	c  Channel
	in demiurge.Inbound
}

func (r inboundRoute) Deliver(ctx context.Context, out demiurge.Outbound) error {
	return r.c.Send(ctx, r.in, out)
}
