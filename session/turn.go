package session

import (
	"context"

	"github.com/demiurge/demiurge"
)

// TurnStart names a turn about to run.
type TurnStart struct {
	TurnID       string
	SessionID    string
	CoreID       string
	CoreRevision string
	HostID       string
}

// StartTurn records a running turn (turn.started). Starting the same turn
// again is a no-op (idempotency key turn:<id>:started). Errors: EINVALID for
// missing ids, ENOTFOUND for a missing session.
func (r *Runtime) StartTurn(ctx context.Context, t TurnStart) error {
	if t.TurnID == "" || t.SessionID == "" {
		return demiurge.Errorf(demiurge.EINVALID, "turn start requires turn_id and session_id")
	}
	if _, err := r.session(ctx, t.SessionID); err != nil {
		return err
	}
	p := demiurge.TurnStartedPayload{SessionID: t.SessionID, Status: demiurge.TurnRunning,
		CoreID: t.CoreID, CoreRevision: t.CoreRevision, HostID: t.HostID}
	_, err := r.st.Append(ctx, []demiurge.Event{r.event(demiurge.AggTurn, t.TurnID, p)}, "turn:"+t.TurnID+":started", nil)
	return err
}

// terminalEvent maps a terminal turn status to the event that records it.
// needs_user is a completed turn whose payload status says so.
func terminalEvent(status string) (string, bool) {
	switch status {
	case demiurge.TurnCompleted, demiurge.TurnNeedsUser:
		return demiurge.EvTurnCompleted, true
	case demiurge.TurnFailed:
		return demiurge.EvTurnFailed, true
	case demiurge.TurnCancelled:
		return demiurge.EvTurnCancelled, true
	case demiurge.TurnLost:
		return demiurge.EvTurnLost, true
	}
	return "", false
}

// TerminalKey is the idempotency key of a turn's terminal event. Everything
// that ends a turn (this runtime, restart reconciliation) appends under it, so
// a turn gets exactly one terminal event whoever gets there first.
func TerminalKey(turnID string) string { return "turn:" + turnID + ":terminal" }

// FinishTurn records the terminal status of a turn: completed, needs_user,
// failed, cancelled or lost; errInfo (may be nil) is stored as the turn's
// error. A turn ends once: finishing it again with the status it ended with
// is a no-op, with another status ECONFLICT "turn <id> already ended: <status>".
// Errors: EINVALID for an unknown status, ENOTFOUND "turn not found: <id>".
//
// Exactly one terminal event is appended whoever races to end the turn: the
// append carries the idempotency key TerminalKey(turnID) and expects the
// turn's newest event to be the one read with the running status, so a
// terminal event appended under any other key (restart reconciliation's
// turn.lost) is seen as well.
func (r *Runtime) FinishTurn(ctx context.Context, turnID, status string, errInfo *demiurge.ErrorInfo) error {
	typ, ok := terminalEvent(status)
	if !ok {
		return demiurge.Errorf(demiurge.EINVALID, "invalid terminal turn status %q: expected completed, needs_user, failed, cancelled or lost", status)
	}
	for attempt := 0; attempt < finishAttempts; attempt++ {
		last, err := r.st.LastSeq(ctx, demiurge.AggTurn, turnID)
		if err != nil {
			return err
		}
		t, err := r.st.Turn(ctx, turnID)
		if err != nil {
			if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
				return demiurge.WrapError(demiurge.ENOTFOUND, err, "turn not found: %s", turnID)
			}
			return err
		}
		if demiurge.TurnTerminal(t.Status) {
			return endedAs(t, status)
		}
		p, err := demiurge.TurnEnd{SessionID: t.SessionID, Status: status, Error: errInfo}.As(typ)
		if err != nil {
			return err
		}
		ev := r.event(demiurge.AggTurn, turnID, p)
		ev.EventID = demiurge.NewID("evt")
		stored, err := r.st.Append(ctx, []demiurge.Event{ev}, TerminalKey(turnID),
			&demiurge.Expected{AggregateType: demiurge.AggTurn, AggregateID: turnID, LastSeq: last})
		switch {
		case demiurge.ErrorCode(err) == demiurge.ECONFLICT:
			continue // the turn moved since it was read: look again
		case err != nil:
			return err
		case len(stored) > 0 && stored[0].EventID != ev.EventID:
			// The key matched a terminal event another writer appended
			// first: report what that one said.
			continue
		}
		return nil
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "turn %s kept changing while it was being finished", turnID)
}

// finishAttempts bounds FinishTurn's re-reads when the turn keeps moving.
const finishAttempts = 3

func endedAs(t demiurge.Turn, status string) error {
	if t.Status == status {
		return nil
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "turn %s already ended: %s", t.ID, t.Status)
}
