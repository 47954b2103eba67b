package store

import (
	"context"

	"github.com/demiurge/demiurge"
)

// Limits of ListTurns and ToolCalls.
const (
	DefaultTurnLimit = 20
	MaxTurnLimit     = 1000
	MaxToolCalls     = 1000
)

const turnSelect = `SELECT turn_id, session_id, status, core_id, core_revision, host_id, result_ref, error_json,
  created_at, completed_at, input_tokens, output_tokens, cached_tokens, model_steps FROM turns`

const (
	sqlListTurns = turnSelect + ` WHERE session_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`
	sqlToolCalls = `SELECT call_id, turn_id, step_id, tool_name, status, args_json, result_json,
  created_at, completed_at FROM tool_calls WHERE turn_id = ? ORDER BY created_at, rowid LIMIT ?`
)

// Turn returns one turn; ENOTFOUND "turn not found: <id>" when missing.
func (db *DB) Turn(ctx context.Context, id string) (demiurge.Turn, error) {
	tr, err := scanTurn(db.reader.QueryRowContext(ctx, turnSelect+` WHERE turn_id = ?`, id))
	if isNoRows(err) {
		return tr, demiurge.Errorf(demiurge.ENOTFOUND, "turn not found: %s", id)
	}
	return tr, db.codeError(ctx, err)
}

// ListTurns returns a session's turns newest first (created_at DESC, rowid
// DESC); limit defaults to DefaultTurnLimit and is capped at MaxTurnLimit.
func (db *DB) ListTurns(ctx context.Context, sessionID string, limit int) ([]demiurge.Turn, error) {
	rows, err := db.reader.QueryContext(ctx, sqlListTurns, sessionID, clampLimit(limit, DefaultTurnLimit, MaxTurnLimit))
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Turn
	for rows.Next() {
		tr, err := scanTurn(rows)
		if err != nil {
			return nil, db.codeError(ctx, err)
		}
		out = append(out, tr)
	}
	return out, db.codeError(ctx, rows.Err())
}

func scanTurn(r scanner) (demiurge.Turn, error) {
	var tr demiurge.Turn
	var core, rev, host, result, completed ns
	var errJSON, created string
	if err := r.Scan(&tr.ID, &tr.SessionID, &tr.Status, &core, &rev, &host, &result, &errJSON, &created, &completed,
		&tr.Usage.InputTokens, &tr.Usage.OutputTokens, &tr.Usage.CachedTokens, &tr.ModelSteps); err != nil {
		return tr, err
	}
	tr.CoreID, tr.CoreRevision, tr.HostID, tr.ResultRef = core.String, rev.String, host.String, result.String
	if m := objectOrCorrupt(errJSON); len(m) > 0 {
		tr.Error = m
	}
	tr.CreatedAt, tr.CompletedAt = demiurge.ParseTime(created), parseTime(completed)
	return tr, nil
}

// ToolCalls returns the tool calls of a turn in the order they started
// (created_at, rowid), at most MaxToolCalls.
func (db *DB) ToolCalls(ctx context.Context, turnID string) ([]demiurge.ToolCallRecord, error) {
	rows, err := db.reader.QueryContext(ctx, sqlToolCalls, turnID, MaxToolCalls)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.ToolCallRecord
	for rows.Next() {
		var c demiurge.ToolCallRecord
		var turn, step, completed ns
		var args, result, created string
		if err := rows.Scan(&c.CallID, &turn, &step, &c.ToolName, &c.Status, &args, &result, &created, &completed); err != nil {
			return nil, db.codeError(ctx, err)
		}
		c.TurnID, c.StepID = turn.String, step.String
		c.Args, c.Result = objectOrCorrupt(args), objectOrCorrupt(result)
		c.CreatedAt, c.CompletedAt = demiurge.ParseTime(created), parseTime(completed)
		out = append(out, c)
	}
	return out, db.codeError(ctx, rows.Err())
}
