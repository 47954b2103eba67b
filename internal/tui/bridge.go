package tui

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// bridge is the engine over a *host.Host: the one place where the Host's
// API becomes the model's messages. Turns run through Host.Run with the
// stream, tool-call, approval and route callbacks posting to the model;
// every goroutine it starts is tracked and close waits for them.
type bridge struct {
	h    *host.Host
	opts Options
	post func(tea.Msg)

	ctx    context.Context // cancelled by close: every turn and read ends
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex // guards turns
	turns map[int]*bridgeTurn

	watchMu sync.Mutex // guards the watch: watched, feed, detach
	watched string
	feed    *host.Feed
	detach  func()

	cmds commands
}

type bridgeTurn struct {
	cancel context.CancelFunc
	turnID string
}

// historyLimit is how many messages of a resumed session are shown.
const historyLimit = 500

func newBridge(h *host.Host, opts Options, post func(tea.Msg)) *bridge {
	ctx, cancel := context.WithCancel(context.Background())
	b := &bridge{h: h, opts: opts, post: post, ctx: ctx, cancel: cancel, turns: map[int]*bridgeTurn{}}
	b.cmds = newCommands(b)
	return b
}

// close cancels every turn and read, ends the watch, and waits for them
// to end.
func (b *bridge) close() {
	b.cancel()
	b.watchMu.Lock()
	b.unwatchLocked()
	b.watchMu.Unlock()
	b.wg.Wait()
}

// cancelAll cancels the running turns without waiting (SIGHUP).
func (b *bridge) cancelAll() { b.cancel() }

// goTracked runs fn on a goroutine close waits for. The model calls the
// engine from bubbletea's goroutine, which must never wait for a post it
// would itself have to receive: every post happens here.
func (b *bridge) goTracked(fn func()) {
	b.wg.Go(fn)
}

func (b *bridge) startTurn(spec turnSpec) {
	ctx, cancel := context.WithCancel(b.ctx)
	bt := &bridgeTurn{cancel: cancel}
	b.mu.Lock()
	b.turns[spec.seq] = bt
	b.mu.Unlock()
	seq := spec.seq
	req := turn.Request{
		CoreID: b.opts.CoreID, Text: spec.text,
		SessionID: spec.sessionID, NewSession: spec.newSession, NewSessionID: spec.newSessionID,
		Workspace: b.opts.Workspace, Provider: b.opts.Provider, Model: b.opts.Model,
		Route:    bridgeRoute{b: b, seq: seq},
		Approver: b.approver(seq),
		Stream:   func(delta string) { b.post(streamMsg{seq: seq, delta: delta}) },
		OnAdmitted: func(sessionID, turnID string) {
			b.mu.Lock()
			bt.turnID = turnID
			b.mu.Unlock()
			b.post(turnAdmittedMsg{seq: seq, sessionID: sessionID, turnID: turnID})
		},
		OnToolCall: func(ev turn.ToolCallEvent) { b.post(toolMsg{seq: seq, ev: ev, at: time.Now()}) },
		OnStep:     func(ev turn.StepEvent) { b.post(stepMsg{seq: seq, usage: ev.Usage}) },
	}
	b.goTracked(func() {
		defer cancel()
		res, err := b.h.Run(ctx, req)
		b.mu.Lock()
		delete(b.turns, seq)
		b.mu.Unlock()
		b.post(turnDoneMsg{seq: seq, res: res, err: err})
	})
}

func (b *bridge) cancelTurn(seq int) {
	b.mu.Lock()
	bt := b.turns[seq]
	var turnID string
	if bt != nil {
		turnID = bt.turnID
	}
	b.mu.Unlock()
	if bt == nil {
		return
	}
	if turnID != "" {
		b.h.CancelTurn(turnID, demiurge.OperatorScope(""))
	}
	// Before admission there is no turn id yet: the context stops it.
	bt.cancel()
}

func (b *bridge) approver(seq int) effect.Approver {
	switch b.opts.Approve {
	case "all":
		return fixedApprover(effect.DecisionAllowOnce)
	case "deny":
		return fixedApprover(effect.DecisionDeny)
	}
	return &panelApprover{b: b, seq: seq}
}

type fixedApprover string

func (a fixedApprover) Approve(context.Context, effect.ApprovalRequest) (string, error) {
	return string(a), nil
}

// panelApprover asks in the approval panel and waits for the answer. A
// cancelled turn, a closed UI and any answer but an allow are a denial.
// seq is the UI's turn that asks, 0 for the session's background work.
type panelApprover struct {
	b   *bridge
	seq int
}

func (a *panelApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	q := newQuestion(req)
	a.b.post(approvalMsg{seq: a.seq, q: q})
	select {
	case d := <-q.reply:
		if d == effect.DecisionAllowOnce || d == effect.DecisionAllowSession {
			return d, nil
		}
		return effect.DecisionDeny, nil
	case <-ctx.Done():
		a.b.post(approvalGoneMsg{q: q})
		return effect.DecisionDeny, ctx.Err()
	}
}

// bridgeRoute takes a turn's deliveries to the transcript.
type bridgeRoute struct {
	b   *bridge
	seq int
}

func (r bridgeRoute) Deliver(_ context.Context, o demiurge.Outbound) error {
	r.b.post(deliveryMsg{seq: r.seq, out: o})
	return nil
}

func (b *bridge) command(line string) {
	b.goTracked(func() {
		out, err := b.cmds.dispatch(b.ctx, line)
		b.post(outcomeMsg{out: out, err: err})
	})
}

func (b *bridge) callback(fn func(context.Context) (outcome, error)) {
	b.goTracked(func() {
		out, err := fn(b.ctx)
		b.post(outcomeMsg{out: out, err: err})
	})
}

func (b *bridge) complete(m *Model, input string) []string { return b.cmds.complete(m, input) }

func (b *bridge) suggest(token string) []suggestion { return b.cmds.suggest(token) }

// call runs fn on the UI goroutine and waits for it; once the bridge is
// closing it gives up, and fn then never runs.
func (b *bridge) call(fn func(*Model)) {
	c := &callMsg{fn: fn, done: make(chan struct{})}
	b.post(c)
	select {
	case <-c.done:
	case <-b.ctx.Done():
		c.abandon()
	}
}

func (b *bridge) loadHistory(sessionID string) {
	b.goTracked(func() { b.post(b.readHistory(sessionID, false)) })
}

func (b *bridge) loadConversation() {
	b.goTracked(func() {
		id, ok, err := b.h.CLISession(b.ctx, b.opts.CoreID)
		if err != nil {
			if b.ctx.Err() == nil {
				b.post(noticeMsg{level: levelWarning, text: "the conversation's history did not load: " + demiurge.ErrorMessage(err)})
			}
			return
		}
		if ok {
			b.post(b.readHistory(id, true))
		}
	})
}

// readHistory reads a session's newest messages and the tool calls of
// their turns.
func (b *bridge) readHistory(sessionID string, conversation bool) historyMsg {
	msg := historyMsg{sessionID: sessionID, conversation: conversation}
	msg.msgs, msg.err = b.h.Transcript(b.ctx, sessionID, historyLimit)
	if msg.err != nil {
		return msg
	}
	msg.calls = map[string][]turn.ToolCallEvent{}
	for _, h := range msg.msgs {
		if h.TurnID == "" {
			continue
		}
		if _, seen := msg.calls[h.TurnID]; seen {
			continue
		}
		calls, err := b.h.TurnToolCalls(b.ctx, h.TurnID)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.calls[h.TurnID] = calls
	}
	return msg
}

func (b *bridge) refresh(sessionID string) {
	b.goTracked(func() {
		tasks, err := b.h.ListTasks(b.ctx, false, 0)
		if err != nil {
			return // the status line keeps what it showed
		}
		n := 0
		for _, t := range tasks {
			if t.OwnerSessionID == sessionID {
				n++
			}
		}
		usage, err := b.h.SessionUsage(b.ctx, sessionID)
		if err != nil {
			return
		}
		b.post(sessionReadMsg{sessionID: sessionID, tasks: n, usage: usage})
	})
}

// watch follows sessionID's live feed and attaches the panel as the
// approver of its background work, ending the previous session's.
func (b *bridge) watch(sessionID string) {
	b.goTracked(func() {
		b.watchMu.Lock()
		defer b.watchMu.Unlock()
		if b.watched == sessionID || b.ctx.Err() != nil {
			return
		}
		b.unwatchLocked()
		f, err := b.h.Subscribe(b.ctx, sessionID, host.FeedOptions{CoreID: b.opts.CoreID})
		if err != nil {
			if b.ctx.Err() == nil {
				b.post(noticeMsg{level: levelWarning, text: "no live notices for this session: " + demiurge.ErrorMessage(err)})
			}
			return
		}
		b.watched, b.feed = sessionID, f
		if b.opts.Approve == "" || b.opts.Approve == "ask" {
			b.detach = b.h.AttachApprover(sessionID, &panelApprover{b: b})
		}
		b.goTracked(func() { b.readFeed(f) })
	})
}

// unwatchLocked ends the current watch (b.watchMu held).
func (b *bridge) unwatchLocked() {
	if b.feed != nil {
		b.feed.Close()
	}
	if b.detach != nil {
		b.detach()
	}
	b.watched, b.feed, b.detach = "", nil, nil
}

// readFeed turns a feed's items into notices and status refreshes until
// the feed is closed.
func (b *bridge) readFeed(f *host.Feed) {
	for it := range f.C() {
		if text, level, ok := it.Notice(); ok {
			l := levelInfo
			switch level {
			case host.NoticeWarning:
				l = levelWarning
			case host.NoticeError:
				l = levelError
			}
			b.post(noticeMsg{level: l, text: text})
		}
		if it.Source == host.FeedTask || it.Dropped > 0 {
			b.refresh(f.SessionID())
		}
	}
}

func (b *bridge) forget(sessionID string) {
	b.goTracked(func() { b.h.ForgetSession(sessionID) })
}
