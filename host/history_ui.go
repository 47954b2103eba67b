package host

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/turn"
)

// maxCallEvents bounds the events read of one tool call: its start, its
// end and the few its effect recorded between them.
const maxCallEvents = 64

// TurnToolCalls lists the tool calls of a turn in the order they started,
// each as the event that ended it showed it live (turn.RecordedToolCall,
// with the effect status its end event recorded): what a front end draws
// as the cards of a session it resumes. An unknown turn has none.
func (h *Host) TurnToolCalls(ctx context.Context, turnID string) ([]turn.ToolCallEvent, error) {
	recs, err := h.store.ToolCalls(ctx, turnID)
	if err != nil {
		return nil, err
	}
	out := make([]turn.ToolCallEvent, 0, len(recs))
	for _, r := range recs {
		var status demiurge.EffectStatus
		if !r.CompletedAt.IsZero() {
			if status, err = h.callEndStatus(ctx, r.CallID); err != nil {
				return nil, err
			}
		}
		out = append(out, turn.RecordedToolCall(r, status))
	}
	return out, nil
}

// callEndStatus is the effect status the end event of a tool call
// recorded ("" when it has none).
func (h *Host) callEndStatus(ctx context.Context, callID string) (demiurge.EffectStatus, error) {
	evs, err := h.store.Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggToolCall, AggregateID: callID, Limit: maxCallEvents})
	if err != nil {
		return "", err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if t := evs[i].Type; t == demiurge.EvToolCallCompleted || t == demiurge.EvToolCallFailed {
			var end demiurge.ToolCallEnd
			if err := evs[i].Decode(&end); err != nil {
				return "", err
			}
			return end.EffectStatus, nil
		}
	}
	return "", nil
}

// CLISession is the session the local CLI conversation of coreID ("" the
// default core) is bound to: the one a turn without a session id
// continues. ok is false when there is none yet.
func (h *Host) CLISession(ctx context.Context, coreID string) (id string, ok bool, err error) {
	coreID = h.coreOrDefault(coreID)
	conv := session.CLIConversationKey(coreID)
	id, ok, err = h.store.SessionBinding(ctx, coreID, conv.Channel, conv.Key)
	if err != nil || !ok {
		return "", false, err
	}
	if _, err := h.store.Session(ctx, id); err != nil {
		if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
			return "", false, nil // a binding to a row that is gone: the next turn makes a new one
		}
		return "", false, err
	}
	return id, true, nil
}
