package session

import (
	"context"

	"github.com/demiurge/demiurge"
)

// StartTurn records a running turn (turn.started). Starting the same turn
// again is a no-op (idempotency key turn:<id>:started). Errors: EINVALID for
// missing ids, ENOTFOUND for a missing session.
func (r *Runtime) StartTurn(ctx context.Context, t demiurge.TurnStart) error {
	b, err := r.TurnStarted(t)
	if err != nil {
		return err
	}
	if _, err := r.session(ctx, t.SessionID); err != nil {
		return err
	}
	_, err = r.st.Append(ctx, b.Events, b.IdempotencyKey, nil)
	return err
}

// TurnStarted is the batch StartTurn appends, for a caller that writes it
// in a transaction of its own (the turn takes its session lease in the
// same one) and vouches for the session. EINVALID for missing ids.
func (r *Runtime) TurnStarted(t demiurge.TurnStart) (demiurge.EventBatch, error) {
	if t.TurnID == "" || t.SessionID == "" {
		return demiurge.EventBatch{}, demiurge.Errorf(demiurge.EINVALID, "turn start requires turn_id and session_id")
	}
	p := demiurge.TurnStartedPayload{SessionID: t.SessionID, Status: demiurge.TurnRunning,
		CoreID: t.CoreID, CoreRevision: t.CoreRevision, HostID: t.HostID}
	return demiurge.EventBatch{
		Events:         []demiurge.Event{r.event(demiurge.AggTurn, t.TurnID, p)},
		IdempotencyKey: "turn:" + t.TurnID + ":started",
	}, nil
}

// terminalEvent maps a terminal turn status to the event that records it.
// needs_user is a completed turn whose payload status says so.
func terminalEvent(status demiurge.TurnStatus) (string, bool) {
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
func (r *Runtime) FinishTurn(ctx context.Context, turnID string, status demiurge.TurnStatus, errInfo *demiurge.ErrorInfo) error {
	return r.FinishTurnWith(ctx, turnID, status, errInfo, nil, r.st.AppendBatches)
}

// FinishTurnWith is FinishTurn that writes first, the turn's events not yet
// written, before the terminal event and through commit, so that they and
// the terminal event are one transaction. first is written exactly once
// whatever the outcome: with the terminal event, or alone when the turn has
// already ended (or is not found), in which case the answer is the one
// FinishTurn gives. commit is called with first alone when nothing else is
// to be written, so that whatever else it does happens too.
func (r *Runtime) FinishTurnWith(ctx context.Context, turnID string, status demiurge.TurnStatus, errInfo *demiurge.ErrorInfo, first []demiurge.EventBatch, commit demiurge.CommitBatches) error {
	return r.finishTurn(ctx, turnID, nil, status, errInfo, first, commit)
}

// FinishStartedTurnWith is FinishTurnWith for the runtime that started the
// turn: started is its turn.started event as stored (its Seq set), in the
// session sessionID. Its first attempt reads nothing: it expects started to
// be the turn's newest event, so that anything written to the turn since
// (another ending, reconciliation's turn.lost) makes the attempt conflict,
// and it goes on as FinishTurnWith does.
func (r *Runtime) FinishStartedTurnWith(ctx context.Context, started demiurge.Event, sessionID string, status demiurge.TurnStatus, errInfo *demiurge.ErrorInfo, first []demiurge.EventBatch, commit demiurge.CommitBatches) error {
	if started.AggregateType != demiurge.AggTurn || started.Seq <= 0 || sessionID == "" {
		return r.finishTurn(ctx, started.AggregateID, nil, status, errInfo, first, commit)
	}
	return r.finishTurn(ctx, started.AggregateID, &runningTurn{sessionID: sessionID, lastSeq: started.Seq}, status, errInfo, first, commit)
}

// runningTurn is what a first finishing attempt assumes of its turn.
type runningTurn struct {
	sessionID string
	lastSeq   int64
}

func (r *Runtime) finishTurn(ctx context.Context, turnID string, known *runningTurn, status demiurge.TurnStatus, errInfo *demiurge.ErrorInfo, first []demiurge.EventBatch, commit demiurge.CommitBatches) error {
	typ, ok := terminalEvent(status)
	if !ok {
		return demiurge.Errorf(demiurge.EINVALID, "invalid terminal turn status %q: expected completed, needs_user, failed, cancelled or lost", status)
	}
	// ended writes first alone when the turn's answer is already known.
	ended := func(answer error) error {
		if _, err := commit(ctx, first); err != nil {
			return err
		}
		return answer
	}
	attempts := finishAttempts
	if known != nil {
		attempts++ // the one that reads nothing
	}
	for attempt := 0; attempt < attempts; attempt++ {
		running := known
		known = nil
		if running == nil {
			last, err := r.st.LastSeq(ctx, demiurge.AggTurn, turnID)
			if err != nil {
				return err
			}
			t, err := r.st.Turn(ctx, turnID)
			if err != nil {
				if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
					return ended(demiurge.WrapError(demiurge.ENOTFOUND, err, "turn not found: %s", turnID))
				}
				return err
			}
			if demiurge.TurnTerminal(t.Status) {
				return ended(endedAs(t, status))
			}
			running = &runningTurn{sessionID: t.SessionID, lastSeq: last}
		}
		p, err := demiurge.TurnEnd{SessionID: running.sessionID, Status: status, Error: errInfo}.As(typ)
		if err != nil {
			return err
		}
		ev := r.event(demiurge.AggTurn, turnID, p)
		ev.EventID = demiurge.NewID("evt")
		all := append(first[:len(first):len(first)], demiurge.EventBatch{
			Events: []demiurge.Event{ev}, IdempotencyKey: TerminalKey(turnID),
			Expected: &demiurge.Expected{AggregateType: demiurge.AggTurn, AggregateID: turnID, LastSeq: running.lastSeq},
		})
		stored, err := commit(ctx, all)
		switch {
		case demiurge.ErrorCode(err) == demiurge.ECONFLICT:
			continue // the turn moved since it was read: look again
		case err != nil:
			return err
		case len(stored[len(first)]) > 0 && stored[len(first)][0].EventID != ev.EventID:
			// The key matched a terminal event another writer appended
			// first (first is written): report what that one said.
			first = nil
			continue
		}
		return nil
	}
	return ended(demiurge.Errorf(demiurge.ECONFLICT, "turn %s kept changing while it was being finished", turnID))
}

// finishAttempts bounds FinishTurn's re-reads when the turn keeps moving.
const finishAttempts = 3

func endedAs(t demiurge.Turn, status demiurge.TurnStatus) error {
	if t.Status == status {
		return nil
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "turn %s already ended: %s", t.ID, t.Status)
}
