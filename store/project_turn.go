package store

import (
	"github.com/demiurge/demiurge"
)

var (
	// A repeated turn.started refreshes a running turn but never revives
	// one that has ended: the WHERE of the upsert leaves a terminal row as
	// it is.
	sqlTurnStart = prep(`INSERT INTO turns
  (turn_id, session_id, status, input_ref, result_ref, core_id, core_revision, host_id, error_json, created_at, completed_at)
  VALUES (?, ?, 'running', ?, NULL, ?, ?, ?, '{}', ?, NULL)
  ON CONFLICT(turn_id) DO UPDATE SET session_id = excluded.session_id,
    input_ref = excluded.input_ref, core_id = excluded.core_id,
    core_revision = excluded.core_revision, host_id = excluded.host_id
  WHERE turns.status = 'running'`)
	// Only a running turn ends: of two terminal events (say turn.completed
	// from the turn and turn.lost from a reconciling Host) the first one
	// applied is the turn's terminal state and later ones leave it alone.
	sqlTurnFinish = prep(`UPDATE turns SET status = ?, result_ref = COALESCE(?, result_ref),
  error_json = COALESCE(?, error_json), completed_at = ? WHERE turn_id = ? AND status = 'running'`)
	sqlToolCallStart = prep(`INSERT OR REPLACE INTO tool_calls
  (call_id, turn_id, step_id, tool_name, status, args_json, result_json, created_at, completed_at)
  VALUES (?, ?, ?, ?, 'running', ?, '{}', ?, NULL)`)
	sqlToolCallFinish = prep(`UPDATE tool_calls SET status = ?, result_json = COALESCE(?, result_json),
  completed_at = ? WHERE call_id = ?`)
)

func init() {
	register(projectTurnStarted, demiurge.EvTurnStarted)
	register(projectTurnFinished, demiurge.EvTurnCompleted, demiurge.EvTurnFailed, demiurge.EvTurnCancelled, demiurge.EvTurnLost)
	register(projectToolCallStarted, demiurge.EvToolCallStarted)
	register(projectToolCallFinished, demiurge.EvToolCallCompleted, demiurge.EvToolCallFailed)
}

func projectTurnStarted(t *wtx, e *demiurge.Event, p payload) error {
	_, err := t.exec(sqlTurnStart, e.AggregateID, p.str("session_id"), p.nstr("input_ref"),
		p.nstr("core_id"), p.nstr("core_revision"), p.nstr("host_id"), eventTime(e))
	return err
}

// projectTurnFinished records a terminal turn: status is payload.status or
// the event suffix (turn.completed → completed, turn.lost → lost). A turn
// that is not running (already ended, or never started) is left unchanged;
// the event itself stays in the log.
func projectTurnFinished(t *wtx, e *demiurge.Event, p payload) error {
	errJSON, err := p.njson("error")
	if err != nil {
		return err
	}
	_, err = t.exec(sqlTurnFinish, p.strOr("status", suffix(e.Type)), p.nstr("result_ref"), errJSON, eventTime(e), e.AggregateID)
	return err
}

func projectToolCallStarted(t *wtx, e *demiurge.Event, p payload) error {
	args, err := p.jsonOr("args")
	if err != nil {
		return err
	}
	name := p.strOr("tool_name", p.str("name"))
	_, err = t.exec(sqlToolCallStart, e.AggregateID, p.nstr("turn_id"), p.nstr("step_id"), name, args, eventTime(e))
	return err
}

func projectToolCallFinished(t *wtx, e *demiurge.Event, p payload) error {
	status := "succeeded"
	if e.Type == demiurge.EvToolCallFailed {
		status = "failed"
	}
	result, err := p.njson("result")
	if err != nil {
		return err
	}
	_, err = t.exec(sqlToolCallFinish, p.strOr("status", status), result, eventTime(e), e.AggregateID)
	return err
}
