-- Bounded task logs. tasks.log_lines counts every line a task ever logged;
-- task_logs.line numbers a task's lines from 1, so dropping the lines that
-- fell out of retention is a range delete on idx_task_logs_line whose cost
-- is the number of rows it removes.
ALTER TABLE tasks ADD COLUMN log_lines INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_logs ADD COLUMN line INTEGER;
CREATE INDEX idx_task_logs_line ON task_logs(task_id, line);
UPDATE task_logs SET line = n.rn
  FROM (SELECT seq, ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY seq) AS rn FROM task_logs) AS n
  WHERE task_logs.seq = n.seq;
UPDATE tasks SET log_lines = (SELECT COUNT(*) FROM task_logs WHERE task_logs.task_id = tasks.task_id);

-- Cancel requests (task.cancel_requested) for the Host process that runs a
-- task; its worker polls the open ones of its own host.
ALTER TABLE tasks ADD COLUMN cancel_requested_at TEXT;
ALTER TABLE tasks ADD COLUMN cancel_reason TEXT;
CREATE INDEX idx_tasks_cancel_requested ON tasks(host_id)
  WHERE cancel_requested_at IS NOT NULL AND status IN ('queued', 'running', 'blocked_needs_user');

-- The process a task runs (task.process_recorded), for restart recovery.
ALTER TABLE tasks ADD COLUMN process_pid INTEGER;
ALTER TABLE tasks ADD COLUMN process_marker TEXT;

-- The completion work item of a task (task.completion_ready). A terminal
-- task that should notify its owner session but has none yet is in
-- idx_tasks_completion_due, so finding them costs the backlog, not history.
ALTER TABLE tasks ADD COLUMN completion_work_id TEXT;
CREATE INDEX idx_tasks_completion_due ON tasks(completed_at)
  WHERE completion_work_id IS NULL AND owner_session_id IS NOT NULL
    AND (notify_policy IS NULL OR notify_policy != 'silent')
    AND status IN ('succeeded', 'failed', 'cancelled', 'lost');
-- Tasks that ended before this schema keep whatever completion they had and
-- get none now ('' = none recorded).
UPDATE tasks SET completion_work_id = COALESCE((SELECT e.aggregate_id FROM runtime_events e
    WHERE e.idempotency_key = 'task:' || tasks.task_id || ':completion_ready'
      AND e.type = 'task.completion_ready' LIMIT 1), '')
  WHERE status IN ('succeeded', 'failed', 'cancelled', 'lost');
