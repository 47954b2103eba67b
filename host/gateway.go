package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/gateway"
	"github.com/demiurge/demiurge/redact"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/store"
	"github.com/demiurge/demiurge/turn"
)

// DefaultGatewayDrain is how long closing a Host with a running gateway
// waits for the channel turns in flight before cancelling them.
const DefaultGatewayDrain = 30 * time.Second

// GatewayOptions configure StartGateway.
type GatewayOptions struct {
	// Drain bounds the wait for in-flight turns at Close (default
	// DefaultGatewayDrain).
	Drain time.Duration
	// Inbox tunes the inbox worker (tests shorten its backoff); HostID,
	// Logger and Redact are the Host's.
	Inbox gateway.Options
	// ApprovalTimeout bounds an approval question put on a channel
	// (default 10 minutes).
	ApprovalTimeout time.Duration
	// webhookListener, set by tests, serves the webhook channels on
	// listeners of their choosing; mailTLS is the mail clients' TLS
	// configuration (their own certificate authority).
	webhookListener func(coreID, name string) net.Listener
	mailTLS         *tls.Config
}

// gatewayRun is the running gateway of a Host.
type gatewayRun struct {
	g        *gateway.Gateway
	channels []builtChannel
}

// approverFor is the approver of the channel in came from, nil for a
// channel that cannot ask (a prompt is then a denial).
func (g *gatewayRun) approverFor(in demiurge.Inbound) effect.Approver {
	if g == nil {
		return nil
	}
	for _, b := range g.channels {
		if b.CoreID == in.CoreID && b.Name == in.Channel && b.approver != nil {
			return b.approver(in)
		}
	}
	return nil
}

// GatewayChannel names one configured channel and, when it cannot run,
// why.
type GatewayChannel struct {
	CoreID, Name, Type string
	Err                error
}

// ChannelsEnabled reports whether any core of the home enables a channel
// (serve starts the gateway then).
func (h *Host) ChannelsEnabled(ctx context.Context) (bool, error) {
	ids, err := coreIDs(h.home)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		snap, err := h.cores.Load(ctx, id)
		if err != nil {
			continue
		}
		if len(enabledChannels(snap.Core)) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// StartGateway runs every enabled channel of every core of the home behind
// the channel inbox, until the Host closes (Close drains the turns in
// flight first, for at most opts.Drain). A channel that cannot run (an
// unsupported type, a missing token, a core that does not load) is
// recorded as disabled with its reason and reported; the others run.
// Errors: ECONFIG when no channel can run, with every reason.
func (h *Host) StartGateway(ctx context.Context, opts GatewayOptions) ([]GatewayChannel, error) {
	if h.gateway != nil {
		return nil, demiurge.Errorf(demiurge.ECONFLICT, "the gateway already runs in this Host")
	}
	built, report, err := h.buildChannels(ctx, channelEnv{getenv: h.getenv, urlPolicy: h.urlPolicy, logger: h.logger,
		webhookListener: opts.webhookListener, mailTLS: opts.mailTLS, approvalTimeout: opts.ApprovalTimeout, busyMode: h.config.Channel.BusyMode})
	if err != nil {
		return nil, err
	}
	var specs []gateway.Channel
	var secrets []string
	for _, b := range built {
		secrets = append(secrets, b.secrets...)
		specs = append(specs, b.spec)
	}
	closeAll := func() {
		for _, b := range built {
			b.close()
		}
	}
	if len(specs) == 0 {
		var reasons []string
		for _, r := range report {
			reasons = append(reasons, fmt.Sprintf("%s/%s: %s", r.CoreID, r.Name, demiurge.ErrorMessage(r.Err)))
		}
		msg := "no core has enabled gateway channels (agents/<core>/agent.yaml channels: <name>: {enabled: true})"
		if len(reasons) > 0 {
			msg = "no gateway channel can run: " + strings.Join(reasons, "; ")
		}
		return report, demiurge.Errorf(demiurge.ECONFIG, "%s", msg)
	}
	h.providers.addSecrets(secrets)
	red := h.redactor()
	inbox := opts.Inbox
	inbox.HostID, inbox.Logger, inbox.Subscribe = h.lease.ID(), h.logger, h.store.Subscribe
	inbox.Redact = func(s string) string { return red().String(s, redact.Durable) }
	g, err := gateway.New(h.store, gatewayRunner{h: h}, specs, inbox)
	if err != nil {
		closeAll()
		return report, err
	}
	drain := opts.Drain
	if drain <= 0 {
		drain = DefaultGatewayDrain
	}
	h.gateway = &gatewayRun{g: g, channels: built}
	g.Start()
	if err := h.closers.opened("gateway", drain, func(ctx context.Context) error {
		err := g.Close(ctx)
		closeAll()
		if errors.Is(err, context.DeadlineExceeded) {
			h.logger.Warn("gateway drain ended with turns still running; they were cancelled")
			return nil
		}
		return err
	}); err != nil {
		return report, err
	}
	for _, b := range built {
		h.logger.Info("gateway channel started", "core_id", b.CoreID, "channel", b.Name, "type", b.Type)
	}
	return report, nil
}

// buildChannels builds every enabled channel of every core; what cannot
// run is recorded disabled (with its reason) and returned in report.
func (h *Host) buildChannels(ctx context.Context, env channelEnv) (built []builtChannel, report []GatewayChannel, err error) {
	ids, err := coreIDs(h.home)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		snap, err := h.cores.Load(ctx, id)
		if err != nil {
			continue // a core that does not load runs nothing; doctor names it
		}
		coreEnv := env
		if coreEnv.workspace, err = h.Workspace(ctx, id, h.home.WorkspaceDir()); err != nil {
			coreEnv.workspace = "" // its turns fail the same way; the channel takes no files
		}
		coreEnv.artifacts = h.home.ArtifactsDir()
		for _, ch := range enabledChannels(snap.Core) {
			b := buildChannel(id, ch, coreEnv)
			report = append(report, GatewayChannel{CoreID: id, Name: ch.Name, Type: ch.Type, Err: b.Err})
			if b.Err != nil {
				st := demiurge.ChannelState{CoreID: id, Channel: ch.Name, Type: ch.Type, State: demiurge.ChannelDisabled,
					LastError: demiurge.ErrorMessage(b.Err)}
				if err := h.store.RecordChannel(ctx, st); err != nil {
					h.logger.Warn("record disabled channel", "channel", ch.Name, "err", err)
				}
				continue
			}
			built = append(built, b)
		}
	}
	return built, report, nil
}

// redactor returns the Host's known secrets (provider keys, channel
// credentials) as a redactor, built afresh on each call.
func (h *Host) redactor() func() *redact.Redactor {
	return func() *redact.Redactor {
		vals := h.providers.Secrets()
		s := make([]redact.Secret, 0, len(vals))
		for _, v := range vals {
			s = append(s, redact.Secret{Value: v, Name: "CHANNEL_SECRET", Source: "host"})
		}
		return redact.New(s...)
	}
}

// gatewayRunner is the gateway's Runner: every inbound runs in the scope
// of its conversation, never wider (an inbound text is untrusted input of
// a user of that core, with no approver: a prompt is a denial).
type gatewayRunner struct{ h *Host }

func (r gatewayRunner) scope(in demiurge.Inbound) (demiurge.PrincipalScope, error) {
	return session.ConversationScope(in.Channel, in.PrincipalKey, in.ConversationKey, "")
}

func (r gatewayRunner) RunInbound(ctx context.Context, in demiurge.Inbound, turnID string, route demiurge.Route) (gateway.TurnOutcome, error) {
	h := r.h
	scope, err := r.scope(in)
	if err != nil {
		return gateway.TurnOutcome{}, err
	}
	// The core's runtime.workspace, else the home's workspace.
	ws, err := h.Workspace(ctx, in.CoreID, h.home.WorkspaceDir())
	if err != nil {
		return gateway.TurnOutcome{}, err
	}
	// The conversation's session: the bound one, or a new one it owns.
	sess, _, err := h.sessions.Resolve(ctx, demiurge.SessionRequest{CoreID: in.CoreID, Channel: in.Channel,
		ConversationKey: in.ConversationKey, Scope: scope, Workspace: ws})
	if err != nil {
		return gateway.TurnOutcome{}, err
	}
	req := turn.Request{CoreID: in.CoreID, Text: in.Text, Attachments: in.Attachments, Channel: in.Channel,
		ConversationKey: in.ConversationKey, Scope: session.ForSession(scope, sess.ID), TurnID: turnID,
		Workspace: ws, Route: route}
	if ap := h.gateway.approverFor(in); ap != nil && route != nil {
		req.Approver = ap
	}
	res, err := h.Run(ctx, req)
	if err != nil {
		return gateway.TurnOutcome{}, err
	}
	out := gateway.TurnOutcome{SessionID: res.SessionID, TurnID: res.TurnID, Outcome: res.Outcome}
	if res.Outcome == turn.OutcomeFailed && res.Error != nil && route != nil {
		// The turn's own deliveries answered a turn that ended; a failed
		// turn is answered here, through the outbox like any reply.
		h.replyInbound(context.WithoutCancel(ctx), res, in, "Turn failed: "+res.Error.Message, route)
	}
	return out, nil
}

// replyInbound records text as a delivery of the turn (never written to
// history) and sends it through route.
func (h *Host) replyInbound(ctx context.Context, res turn.Result, in demiurge.Inbound, text string, route demiurge.Route) {
	id, err := h.delivery.Enqueue(ctx, demiurge.DeliveryIntent{SessionID: res.SessionID, TurnID: res.TurnID,
		Channel: in.Channel, ConversationKey: in.ConversationKey, Source: in.Source, ReplyTo: in.ReplyTo,
		Kind: demiurge.DeliveryKindMessage, Text: text, Visible: true, HistoryPolicy: demiurge.HistoryTransient})
	if err != nil {
		h.logger.Warn("record channel reply", "session_id", res.SessionID, "err", err)
		return
	}
	token := h.router.Bind(res.SessionID, route)
	defer h.router.Unbind(token)
	if _, err := h.delivery.Dispatch(demiurge.WithRouteToken(ctx, token), id); err != nil {
		h.logger.Warn("send channel reply", "delivery_id", id, "err", err)
	}
}

func (r gatewayRunner) TurnExists(ctx context.Context, turnID string) (bool, error) {
	_, err := r.h.store.Turn(ctx, turnID)
	switch demiurge.ErrorCode(err) {
	case "":
		return true, nil
	case demiurge.ENOTFOUND:
		return false, nil
	}
	return false, err
}

func (r gatewayRunner) NewSession(ctx context.Context, in demiurge.Inbound) (string, error) {
	scope, err := r.scope(in)
	if err != nil {
		return "", err
	}
	ws, err := r.h.Workspace(ctx, in.CoreID, r.h.home.WorkspaceDir())
	if err != nil {
		return "", err
	}
	old, bound, _ := r.h.store.SessionBinding(ctx, in.CoreID, in.Channel, in.ConversationKey)
	s, _, err := r.h.sessions.Resolve(ctx, demiurge.SessionRequest{CoreID: in.CoreID, Channel: in.Channel,
		ConversationKey: in.ConversationKey, Scope: scope, New: true, Workspace: ws})
	if err != nil {
		return "", err
	}
	if bound && old != s.ID {
		r.h.ForgetSession(old)
	}
	return s.ID, nil
}

func (r gatewayRunner) Sessions(ctx context.Context, in demiurge.Inbound, limit int) ([]demiurge.Session, string, error) {
	scope, err := r.scope(in)
	if err != nil {
		return nil, "", err
	}
	list, err := r.h.store.ConversationSessions(ctx, in.CoreID, scope, limit)
	if err != nil {
		return nil, "", err
	}
	current, _, err := r.h.store.SessionBinding(ctx, in.CoreID, in.Channel, in.ConversationKey)
	return list, current, err
}

func (r gatewayRunner) Resume(ctx context.Context, in demiurge.Inbound, sessionID string) error {
	scope, err := r.scope(in)
	if err != nil {
		return err
	}
	_, _, err = r.h.sessions.Resolve(ctx, demiurge.SessionRequest{CoreID: in.CoreID, Channel: in.Channel,
		ConversationKey: in.ConversationKey, Scope: scope, SessionID: sessionID})
	if demiurge.ErrorCode(err) == demiurge.EINVALID && strings.Contains(demiurge.ErrorMessage(err), "belongs to core") {
		return demiurge.Errorf(demiurge.ENOTFOUND, "session not found: %s", sessionID)
	}
	return err
}

// GatewayStatus is what `gateway status` reports: every enabled channel of
// every core with its state and last error (redacted when it was
// recorded), the inbox counts by status, and the newest dead letters with
// their reasons.
type GatewayStatus struct {
	Channels    []GatewayChannelStatus
	DeadLetters []demiurge.Inbound
}

// GatewayChannelStatus is one channel's line of the status.
type GatewayChannelStatus struct {
	CoreID, Name, Type string
	// State: running, retrying, stopped, disabled, "lost" (its gateway
	// went away without releasing it) or "not running" for an enabled
	// channel no gateway has run yet.
	State     string
	LastError string
	HostID    string
	UpdatedAt time.Time
	Inbox     map[string]int // inbound status → count
}

// GatewayStatus reads the channels' recorded state from the store (any
// gateway on this home may have recorded it) and checks the configuration
// of the enabled channels no gateway runs.
func (h *Host) GatewayStatus(ctx context.Context) (GatewayStatus, error) {
	states, err := h.store.Channels(ctx)
	if err != nil {
		return GatewayStatus{}, err
	}
	counts, err := h.store.InboxCounts(ctx)
	if err != nil {
		return GatewayStatus{}, err
	}
	dead, err := h.store.Inbounds(ctx, store.InboundFilter{Status: demiurge.InboundDeadLetter, Limit: 20})
	if err != nil {
		return GatewayStatus{}, err
	}
	byKey := map[string]*GatewayChannelStatus{}
	var out GatewayStatus
	add := func(c GatewayChannelStatus) {
		c.Inbox = map[string]int{}
		out.Channels = append(out.Channels, c)
	}
	now := time.Now()
	for _, s := range states {
		state := s.State
		if s.HostID != "" && !s.LeaseExpiresAt.IsZero() && s.LeaseExpiresAt.Before(now) {
			state = "lost" // its gateway stopped renewing the lease without releasing it
		}
		add(GatewayChannelStatus{CoreID: s.CoreID, Name: s.Channel, Type: s.Type, State: state, LastError: s.LastError,
			HostID: s.HostID, UpdatedAt: s.UpdatedAt})
	}
	ids, err := coreIDs(h.home)
	if err != nil {
		return GatewayStatus{}, err
	}
	env := channelEnv{getenv: h.getenv, urlPolicy: h.urlPolicy, logger: h.logger}
	for _, id := range ids {
		snap, err := h.cores.Load(ctx, id)
		if err != nil {
			continue
		}
		for _, ch := range enabledChannels(snap.Core) {
			if slicesIndex(out.Channels, id, ch.Name) >= 0 {
				continue
			}
			b := buildChannel(id, ch, env)
			b.close()
			st := GatewayChannelStatus{CoreID: id, Name: ch.Name, Type: ch.Type, State: "not running"}
			if b.Err != nil {
				st.State, st.LastError = demiurge.ChannelDisabled, demiurge.ErrorMessage(b.Err)
			}
			add(st)
		}
	}
	for i := range out.Channels {
		c := &out.Channels[i]
		byKey[c.CoreID+"\x00"+c.Name] = c
	}
	for _, n := range counts {
		if c := byKey[n.CoreID+"\x00"+n.Channel]; c != nil {
			c.Inbox[n.Status] = n.Count
		}
	}
	red := h.redactor()()
	for i := range out.Channels {
		out.Channels[i].LastError = red.String(out.Channels[i].LastError, redact.Operator)
	}
	for _, d := range dead {
		d.LastError = red.String(d.LastError, redact.Operator)
		d.Text, d.Attachments = "", nil // the message itself is the user's, not the operator's status
		out.DeadLetters = append(out.DeadLetters, d)
	}
	return out, nil
}

func slicesIndex(cs []GatewayChannelStatus, coreID, name string) int {
	for i, c := range cs {
		if c.CoreID == coreID && c.Name == name {
			return i
		}
	}
	return -1
}

// scheduleRoute is the route of a scheduled run that delivers to a channel
// target (spec surfaces §3.16): the running gateway's channel when this
// Host runs it, else the channel built from the core's configuration for
// delivery only (even when it is not enabled). The target is checked
// against the channel's allowlist again (the core's load does it), and the
// run's deliveries reach it like a conversation's replies: a Telegram chat
// id, a webhook delivery_targets entry.
func (h *Host) scheduleRoute(ctx context.Context, coreID, channel, target string) (demiurge.Route, func(), error) {
	snap, err := h.cores.Load(ctx, coreID)
	if err != nil {
		return nil, nil, err
	}
	ch, ok := snap.Core.Manifest.Channels[channel]
	if !ok {
		return nil, nil, demiurge.Errorf(demiurge.ECONFIG, "%s schedule delivery requires channels.%s in agent.yaml", channel, channel)
	}
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{CoreID: coreID, Channel: channel, Source: target,
		Metadata: map[string]any{"telegram_chat_id": target, channel + "_target": target}}}
	if h.gateway != nil {
		for _, b := range h.gateway.channels {
			if b.CoreID == coreID && b.Name == channel {
				return sendRoute{send: b.spec.Send, to: to}, func() {}, nil
			}
		}
	}
	env := channelEnv{getenv: h.getenv, urlPolicy: h.urlPolicy, logger: h.logger, artifacts: h.home.ArtifactsDir()}
	if env.workspace, err = h.Workspace(ctx, coreID, h.home.WorkspaceDir()); err != nil {
		return nil, nil, err
	}
	b := buildChannel(coreID, ch, env)
	if b.Err != nil {
		return nil, nil, b.Err
	}
	h.providers.addSecrets(b.secrets)
	return sendRoute{send: b.spec.Send, to: to}, b.close, nil
}

// sendRoute delivers a run's outbounds to one channel target.
type sendRoute struct {
	send func(context.Context, demiurge.Inbound, demiurge.Outbound) error
	to   demiurge.Inbound
}

func (r sendRoute) Deliver(ctx context.Context, out demiurge.Outbound) error {
	return r.send(ctx, r.to, out)
}
