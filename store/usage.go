package store

import (
	"context"

	"github.com/demiurge/demiurge"
)

var sqlStepUsage = `UPDATE turns SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
  cached_tokens = cached_tokens + ?, model_steps = model_steps + 1
  WHERE turn_id = ?`

const (
	sqlSessionUsage = `SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cached_tokens), 0),
  COALESCE(SUM(model_steps), 0) FROM turns WHERE session_id = ?`
	sqlTurnUsage = `SELECT input_tokens, output_tokens, cached_tokens, model_steps FROM turns WHERE turn_id = ?`
)

func init() { on(projectModelStep) }

// projectModelStep adds one step's tokens to its turn. Negative counts
// (a provider bug) are not added.
func projectModelStep(t *wtx, e evMeta, p demiurge.ModelStepCompletedPayload) error {
	if p.TurnID == "" {
		return demiurge.Errorf(demiurge.EINVALID, "event %s %s: turn_id is required", e.typ, e.aggID)
	}
	_, err := t.exec(sqlStepUsage, max(p.InputTokens, 0), max(p.OutputTokens, 0), max(p.CachedTokens, 0), p.TurnID)
	return err
}

// SessionUsage returns the provider usage of every turn of a session; a
// session without turns (or unknown) has zero usage.
func (db *DB) SessionUsage(ctx context.Context, sessionID string) (demiurge.Usage, error) {
	u, _, err := db.SessionUsageSteps(ctx, sessionID)
	return u, err
}

// SessionUsageSteps is SessionUsage with the number of model steps whose
// usage was recorded.
func (db *DB) SessionUsageSteps(ctx context.Context, sessionID string) (demiurge.Usage, int64, error) {
	var u demiurge.Usage
	var steps int64
	err := db.reader.QueryRowContext(ctx, sqlSessionUsage, sessionID).Scan(&u.InputTokens, &u.OutputTokens, &u.CachedTokens, &steps)
	return u, steps, db.codeError(ctx, err)
}

// TurnUsage returns the provider usage of one turn; ENOTFOUND "turn not
// found: <id>" when missing.
func (db *DB) TurnUsage(ctx context.Context, turnID string) (demiurge.Usage, error) {
	u, _, err := db.TurnUsageSteps(ctx, turnID)
	return u, err
}

// TurnUsageSteps is TurnUsage with the number of model steps whose usage
// was recorded.
func (db *DB) TurnUsageSteps(ctx context.Context, turnID string) (demiurge.Usage, int64, error) {
	var u demiurge.Usage
	var steps int64
	err := db.reader.QueryRowContext(ctx, sqlTurnUsage, turnID).Scan(&u.InputTokens, &u.OutputTokens, &u.CachedTokens, &steps)
	if isNoRows(err) {
		return u, 0, demiurge.Errorf(demiurge.ENOTFOUND, "turn not found: %s", turnID)
	}
	return u, steps, db.codeError(ctx, err)
}
