-- Prompt-cache reads and model steps of each turn: model.step.completed
-- adds one step's cached tokens and counts the step, so a session's totals
-- are sums over its turns (idx_turns_session).
ALTER TABLE turns ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN model_steps INTEGER NOT NULL DEFAULT 0;
