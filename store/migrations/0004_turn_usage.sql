-- Provider usage of each turn: model.step.completed adds one step's tokens,
-- so a session's total is a sum over its turns (idx_turns_session).
ALTER TABLE turns ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
