package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/turn"
)

const denyDecision = effect.DecisionDeny

// The notices of busy turns and interrupts (spec surfaces §2.12, exact).
const (
	noticeNoTurn      = "no running turn"
	noticeInterrupted = "turn interrupted"
)

// submit sends the composer's text: a slash command runs now, a message
// starts a turn, or, while one runs, waits (queue) or interrupts it
// (interrupt) and runs next.
func (m *Model) submit(text string) tea.Cmd {
	m.comp.remember(text)
	m.comp.reset()
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	if m.running == nil {
		m.startTurn(text)
		return nil
	}
	m.queue = append(m.queue, text)
	if m.busyMode == "queue" {
		m.notice(levelInfo, "queued input: "+shorten(oneLine(text), 100))
		return nil
	}
	m.interrupt("new input")
	return nil
}

func (m *Model) startTurn(text string) {
	m.seq++
	m.running = &runningTurn{seq: m.seq, cards: map[string]*entry{}}
	m.tr.add(&entry{kind: kindUser, text: clean(text)})
	m.tr.follow = true
	spec := turnSpec{seq: m.seq, text: text, sessionID: m.sessionID, newSession: m.newSession, newSessionID: m.newSessionID}
	m.eng.startTurn(spec)
}

// interrupt cancels the running turn; it ends recorded as cancelled, the
// session goes on and the queue is kept.
func (m *Model) interrupt(reason string) bool {
	if m.running == nil {
		m.notice(levelInfo, noticeNoTurn)
		return false
	}
	if m.running.cancelled {
		return true
	}
	m.notice(levelWarning, "interrupting current turn: "+reason)
	m.cancelRunning()
	return true
}

// cancelRunning cancels the running turn without a notice (a command that
// interrupts says so itself).
func (m *Model) cancelRunning() {
	if m.running != nil && !m.running.cancelled {
		m.running.cancelled = true
		m.eng.cancelTurn(m.running.seq)
	}
}

func (m *Model) current(seq int) *runningTurn {
	if m.running != nil && m.running.seq == seq {
		return m.running
	}
	return nil
}

func (m *Model) turnAdmitted(msg turnAdmittedMsg) {
	if t := m.current(msg.seq); t != nil {
		t.turnID = msg.turnID
	}
	if msg.sessionID != "" && msg.sessionID != m.sessionID {
		m.sessionID = msg.sessionID
		m.status.sessionID = msg.sessionID
		m.eng.watch(msg.sessionID)
	}
	m.newSession, m.newSessionID = false, ""
}

func (m *Model) stream(msg streamMsg) {
	t := m.current(msg.seq)
	if t == nil || msg.delta == "" {
		return
	}
	t.streamed.WriteString(msg.delta)
	if t.streaming == nil {
		t.streaming = &entry{kind: kindAssistant, streaming: true}
		m.tr.add(t.streaming)
	}
	t.streaming.text += clean(msg.delta)
	t.streaming.changed()
}

// endStream closes the reply being streamed: a tool call or the turn's
// end comes after it, and it is rendered whole from now on.
func (t *runningTurn) endStream() {
	if t.streaming != nil {
		t.streaming.streaming = false
		t.streaming.changed()
		t.streaming = nil
	}
}

// toolCall moves a card through the call's phases: requested, awaiting
// approval, running, ended.
func (m *Model) toolCall(msg toolMsg) {
	t := m.current(msg.seq)
	if t == nil {
		return
	}
	ev := msg.ev
	e := t.cards[ev.CallID]
	if e == nil {
		t.endStream()
		started := ev.StartedAt
		if started.IsZero() {
			started = msg.at
		}
		e = &entry{kind: kindTool, tool: &toolCard{callID: ev.CallID, name: ev.Name, slot: ev.Slot, args: ev.Arguments, started: started}}
		t.cards[ev.CallID] = e
		m.tr.add(e)
	}
	c := e.tool
	if ev.Arguments != nil {
		c.args = ev.Arguments
	}
	if ev.Summary != "" {
		c.summaryText = ev.Summary
	}
	if ev.Display != (turn.ToolDisplay{}) {
		c.display = ev.Display
	}
	switch {
	case ev.Done:
		c.state, c.status, c.isError, c.finished = cardDone, ev.CardStatus(), ev.IsError, msg.at
		c.dur, c.output = ev.Duration, ev.Output
	case ev.Phase == turn.ToolCallAwaitingApproval:
		c.state = cardWaiting
	case ev.Phase == turn.ToolCallRunning:
		c.state, c.started = cardRunning, msg.at
	case c.state != cardWaiting:
		c.state = cardRunning
	}
	e.changed()
}

// ask opens an approval question; its card shows it waits.
func (m *Model) ask(msg approvalMsg) {
	if m.quitting {
		msg.q.answer(denyDecision)
		return
	}
	m.questions = append(m.questions, msg.q)
	if len(m.questions) == 1 {
		m.approval = approvalPanel{}
	}
	m.markCard(msg.seq, msg.q.req.CallID, cardWaiting)
	m.exitArmed = false
}

func (m *Model) markCard(seq int, callID string, s cardState) {
	if t := m.current(seq); t != nil {
		if e := t.cards[callID]; e != nil && e.tool.state != cardDone {
			e.tool.state = s
			e.changed()
		}
	}
}

// answer answers the shown question and moves to the next.
func (m *Model) answer(decision string) {
	if len(m.questions) == 0 {
		return
	}
	q := m.questions[0]
	q.answer(decision)
	m.questions = m.questions[1:]
	m.approval = approvalPanel{}
	if m.running != nil {
		if e := m.running.cards[q.req.CallID]; e != nil && e.tool.state == cardWaiting {
			// The call runs from now: its duration does not count the wait.
			e.tool.state, e.tool.started = cardRunning, m.now()
			e.changed()
		}
	}
	if decision == denyDecision {
		m.notice(levelWarning, "denied: "+oneLine(clean(orDefault(q.req.Summary, q.req.Tool))))
	}
}

// withdraw drops a question nobody waits for any more (its turn was
// cancelled: the approver already took that as a denial).
func (m *Model) withdraw(q *question) {
	for i, open := range m.questions {
		if open == q {
			m.questions = append(m.questions[:i:i], m.questions[i+1:]...)
			if i == 0 {
				m.approval = approvalPanel{}
			}
			return
		}
	}
}

func (m *Model) delivery(msg deliveryMsg) {
	o := msg.out
	text := strings.TrimSpace(o.Text)
	if !o.Visible || text == "" {
		return
	}
	if t := m.current(msg.seq); t != nil && text == strings.TrimSpace(t.streamed.String()) {
		return // the reply already streamed
	}
	switch o.Kind {
	case "progress", "notice":
		m.notice(levelInfo, text)
	default:
		if t := m.current(msg.seq); t != nil {
			t.endStream()
		}
		m.tr.add(&entry{kind: kindAssistant, text: clean(text)})
	}
}

// turnDone shows how the turn ended and starts the next queued message.
func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	t := m.current(msg.seq)
	if t == nil {
		return nil
	}
	t.endStream()
	res := msg.res
	for _, call := range res.ToolCalls {
		if e := t.cards[call.CallID]; e != nil {
			c := e.tool
			if c.output == "" {
				c.output = call.Content
			}
			if c.state != cardDone {
				c.state, c.status, c.isError, c.finished = cardDone, call.Status, call.IsError, m.now()
			}
			e.changed()
		}
	}
	// Cards the turn never finished (it was cancelled mid-call).
	for _, e := range t.cards {
		if e.tool.state != cardDone {
			e.tool.state, e.tool.status, e.tool.finished = cardDone, demiurge.EffectCancelled, m.now()
			e.changed()
		}
	}
	if t.streamed.Len() == 0 && strings.TrimSpace(res.Text) != "" {
		m.tr.add(&entry{kind: kindAssistant, text: clean(res.Text)})
	}
	if res.SessionID != "" {
		m.sessionID, m.status.sessionID = res.SessionID, res.SessionID
		m.newSession, m.newSessionID = false, ""
	}
	if res.CoreRevision != "" {
		m.status.revision = res.CoreRevision
	}
	switch {
	case msg.err != nil:
		m.notice(levelError, errorText(msg.err))
	case res.Outcome == demiurge.TurnCancelled && t.cancelled:
		m.notice(levelInfo, noticeInterrupted)
	case res.Outcome == demiurge.TurnCancelled:
		m.notice(levelWarning, "turn cancelled")
	case res.Outcome == demiurge.TurnFailed || res.Outcome == demiurge.TurnLost:
		why := "unknown error"
		if res.Error != nil {
			why = res.Error.Message
		}
		m.notice(levelError, fmt.Sprintf("turn %s: %s", res.Outcome, why))
	}
	m.running = nil
	if m.sessionID != "" {
		m.eng.refresh(m.sessionID)
	}
	if m.quitting {
		return nil
	}
	if len(m.queue) > 0 {
		next := m.queue[0]
		m.queue = m.queue[1:]
		m.startTurn(next)
	}
	return nil
}

// errorText is an error as one readable line: the public message of a
// demiurge error, never a wrapped cause.
func errorText(err error) string {
	return oneLine(clean(demiurge.ErrorMessage(err)))
}
