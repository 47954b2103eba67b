-- A queued task a Host has claimed but not started yet: the claiming Host
-- and the time its claim lapses. task.started clears both; a lapsed claim
-- (or one of a Host found gone) puts the task back in the queue.
ALTER TABLE tasks ADD COLUMN claim_host_id TEXT;
ALTER TABLE tasks ADD COLUMN claim_expires_at TEXT;
CREATE INDEX idx_tasks_queue ON tasks(created_at) WHERE status = 'queued';
