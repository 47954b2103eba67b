package host

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/corerepo"
)

// The operator's reads for the terminal UI's commands: a session's tasks,
// one turn with its tool calls and events, a session's recent events and
// the core revisions. Like the other operator reads they see every session
// of the home.

// maxTurnScan bounds how many events of the home TurnEvents reads to find
// one turn's: the events between the turn's first and last event, of every
// session (other sessions' turns may run meanwhile).
const maxTurnScan = 50 * demiurge.MaxEventLimit

// SessionTasks lists the tasks a session owns, newest first, at most limit
// (demiurge.TaskFilter's default and maximum apply).
func (h *Host) SessionTasks(ctx context.Context, sessionID string, limit int) ([]demiurge.Task, error) {
	return h.store.ListTasks(ctx, demiurge.TaskFilter{OwnerSessionID: sessionID, Limit: limit})
}

// Turn reads one turn; an unknown id is ENOTFOUND.
func (h *Host) Turn(ctx context.Context, turnID string) (demiurge.Turn, error) {
	return h.store.Turn(ctx, turnID)
}

// ToolCalls lists the tool calls of a turn in the order they started.
func (h *Host) ToolCalls(ctx context.Context, turnID string) ([]demiurge.ToolCallRecord, error) {
	return h.store.ToolCalls(ctx, turnID)
}

// TurnEvents reads the events of one turn in seq order: the turn's own and
// those of its messages, tool calls, model steps and deliveries. An unknown turn is
// ENOTFOUND.
func (h *Host) TurnEvents(ctx context.Context, turnID string) ([]demiurge.Event, error) {
	tr, err := h.store.Turn(ctx, turnID)
	if err != nil {
		return nil, err
	}
	own, err := h.store.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggTurn, AggregateID: turnID, Limit: demiurge.MaxEventLimit})
	if err != nil || len(own) == 0 {
		return own, err
	}
	// The turn's messages and tool calls are written while it runs: between
	// its first event and its last (the head, while it still runs).
	first, last := own[0].Seq, own[len(own)-1].Seq
	if !demiurge.TurnTerminal(tr.Status) {
		last = 0
	}
	member := map[[2]string]bool{}
	calls, err := h.store.ToolCalls(ctx, turnID)
	if err != nil {
		return nil, err
	}
	for _, c := range calls {
		member[[2]string{demiurge.AggToolCall, c.CallID}] = true
	}
	window := demiurge.MessageFilter{AfterSeq: first, Limit: demiurge.MaxMessageLimit}
	if last > 0 {
		window.BeforeSeq = last + 1
	}
	msgs, err := h.store.RecentMessages(ctx, tr.SessionID, window)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if m.TurnID == turnID {
			member[[2]string{demiurge.AggMessage, m.ID}] = true
		}
	}
	out := own
	for after, scanned := first, 0; scanned < maxTurnScan; {
		page, err := h.store.Events(ctx, demiurge.EventFilter{AfterSeq: after, Limit: demiurge.MaxEventLimit})
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if last > 0 && e.Seq > last {
				break
			}
			if member[[2]string{e.AggregateType, e.AggregateID}] || isStepOf(e, turnID) {
				out = append(out, e)
			}
		}
		scanned += len(page)
		if len(page) < demiurge.MaxEventLimit || (last > 0 && page[len(page)-1].Seq >= last) {
			break
		}
		after = page[len(page)-1].Seq
	}
	// Deliveries may be sent after the turn ended: their events are read
	// by delivery.
	deliveries, err := h.store.Deliveries(ctx, demiurge.DeliveryFilter{TurnID: turnID, Limit: demiurge.MaxDeliveryLimit})
	if err != nil {
		return nil, err
	}
	for _, d := range deliveries {
		evs, err := h.store.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggDelivery, AggregateID: d.ID, Limit: demiurge.MaxEventLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	slices.SortFunc(out, func(a, b demiurge.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// isStepOf reports whether e records a model step of turnID (aggregate
// model_step "<turn id>_step_<n>").
func isStepOf(e demiurge.Event, turnID string) bool {
	return e.AggregateType == demiurge.AggModelStep && strings.HasPrefix(e.AggregateID, turnID+"_step_")
}

// SessionEvents reads the newest limit events of a session (1 to
// demiurge.MaxEventLimit; others are clamped) in seq order: the session's
// own and those of its turns (TurnEvents), only of type typ when it is not
// "". An unknown session is ENOTFOUND.
func (h *Host) SessionEvents(ctx context.Context, sessionID, typ string, limit int) ([]demiurge.Event, error) {
	limit = min(max(limit, 1), demiurge.MaxEventLimit)
	if _, err := h.Session(ctx, sessionID); err != nil {
		return nil, err
	}
	turns, err := h.store.ListTurns(ctx, sessionID, 1000)
	if err != nil {
		return nil, err
	}
	var out []demiurge.Event
	var since int64 // the events before it are not needed: limit newer ones were found
	for _, tr := range turns {
		evs, err := h.TurnEvents(ctx, tr.ID)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if typ == "" || e.Type == typ {
				out = append(out, e)
			}
		}
		if len(out) >= limit && len(evs) > 0 {
			since = evs[0].Seq
			break
		}
	}
	for after := since; ; {
		page, err := h.store.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggSession, AggregateID: sessionID, AfterSeq: after, Limit: demiurge.MaxEventLimit})
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if typ == "" || e.Type == typ {
				out = append(out, e)
			}
		}
		if len(page) < demiurge.MaxEventLimit {
			break
		}
		after = page[len(page)-1].Seq
	}
	slices.SortFunc(out, func(a, b demiurge.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	out = slices.CompactFunc(out, func(a, b demiurge.Event) bool { return a.Seq == b.Seq })
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// CoreRevisions are the live and the previous revision of the agents tree
// ("" when there is no previous one).
func (h *Host) CoreRevisions() (live, previous string, err error) {
	if live, err = h.repo.Live(); err != nil {
		return "", "", err
	}
	previous, err = h.repo.Previous()
	return live, previous, err
}

// CoreVersions lists up to limit revisions of the live history, newest
// first (limit <= 0: 20).
func (h *Host) CoreVersions(limit int) ([]corerepo.Version, error) {
	return h.repo.Versions(limit)
}
