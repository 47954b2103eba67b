-- PostgreSQL step of migrations/0010_task_claims.sql.
ALTER TABLE tasks ADD COLUMN claim_host_id TEXT COLLATE "C";
ALTER TABLE tasks ADD COLUMN claim_expires_at TEXT COLLATE "C";
CREATE INDEX idx_tasks_queue ON tasks(created_at) WHERE status = 'queued';
