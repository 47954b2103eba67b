package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

var (
	// A repeated turn.started refreshes a running turn but never revives
	// one that has ended: the WHERE of the upsert leaves a terminal row as
	// it is.
	sqlTurnStart = `INSERT INTO turns
  (turn_id, session_id, status, input_ref, result_ref, core_id, core_revision, host_id, error_json, created_at, completed_at)
  VALUES (?, ?, 'running', ?, NULL, ?, ?, ?, '{}', ?, NULL)
  ON CONFLICT(turn_id) DO UPDATE SET session_id = excluded.session_id,
    input_ref = excluded.input_ref, core_id = excluded.core_id,
    core_revision = excluded.core_revision, host_id = excluded.host_id
  WHERE turns.status = 'running'`
	// Only a running turn ends: of two terminal events (say turn.completed
	// from the turn and turn.lost from a reconciling Host) the first one
	// applied is the turn's terminal state and later ones leave it alone.
	sqlTurnFinish = `UPDATE turns SET status = ?, result_ref = COALESCE(?, result_ref),
  error_json = COALESCE(?, error_json), completed_at = ? WHERE turn_id = ? AND status = 'running'`
	sqlToolCallStart = `INSERT OR REPLACE INTO tool_calls
  (call_id, turn_id, step_id, tool_name, status, args_json, result_json, created_at, completed_at)
  VALUES (?, ?, ?, ?, 'running', ?, '{}', ?, NULL)`
	sqlToolCallFinish = `UPDATE tool_calls SET status = ?, result_json = COALESCE(?, result_json),
  completed_at = ? WHERE call_id = ?`
)

func init() {
	on(projectTurnStarted)
	onFamily(projectTurnFinished, demiurge.TurnCompletedPayload{}, demiurge.TurnFailedPayload{},
		demiurge.TurnCancelledPayload{}, demiurge.TurnLostPayload{})
	on(projectToolCallStarted)
	onFamily(projectToolCallFinished, demiurge.ToolCallCompletedPayload{}, demiurge.ToolCallFailedPayload{})
}

func projectTurnStarted(t *wtx, e evMeta, p demiurge.TurnStartedPayload) error {
	_, err := t.exec(sqlTurnStart, e.aggID, p.SessionID, nullable(p.InputRef),
		nullable(p.CoreID), nullable(p.CoreRevision), nullable(p.HostID), e.stamp())
	return err
}

// projectTurnFinished records a terminal turn: status is the payload's or
// the event suffix (turn.completed → completed, turn.lost → lost). A turn
// that is not running (already ended, or never started) is left unchanged;
// the event itself stays in the log.
func projectTurnFinished(t *wtx, e evMeta, p demiurge.TurnEnd) error {
	errJSON, err := optionalJSON(p.Error, p.Error != nil)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlTurnFinish, cmp.Or(p.Status, demiurge.TurnStatus(suffix(e.typ))), nullable(p.ResultRef), errJSON, e.stamp(), e.aggID)
	return err
}

func projectToolCallStarted(t *wtx, e evMeta, p demiurge.ToolCallStartedPayload) error {
	args, err := marshalJSON(p.Args)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlToolCallStart, e.aggID, nullable(p.TurnID), nullable(p.StepID), p.ToolName, args, e.stamp())
	return err
}

func projectToolCallFinished(t *wtx, e evMeta, p demiurge.ToolCallEnd) error {
	status := "succeeded"
	if e.typ == demiurge.EvToolCallFailed {
		status = "failed"
	}
	result, err := optionalJSON(p.Result, p.Result != nil)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlToolCallFinish, cmp.Or(p.Status, status), result, e.stamp(), e.aggID)
	return err
}
