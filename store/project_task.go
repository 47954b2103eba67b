package store

import (
	"github.com/demiurge/demiurge"
)

var (
	sqlTaskSubmit = prep(`INSERT OR REPLACE INTO tasks
  (task_id, kind, status, root_task_id, parent_task_id, owner_session_id, owner_turn_id, core_id, host_id,
   source_json, notify_policy, result_ref, error_json, created_at, started_at, completed_at, heartbeat_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`)
	// sqlTaskTransition: ?2 (started) and ?3 (completed) pick which
	// timestamps the event sets; ?5 is the event time.
	sqlTaskTransition = prep(`UPDATE tasks SET status = ?1,
  started_at = CASE WHEN ?2 THEN ?5 ELSE started_at END,
  completed_at = CASE WHEN ?3 THEN ?5 ELSE completed_at END,
  result_ref = COALESCE(?4, result_ref), error_json = COALESCE(?6, error_json),
  host_id = COALESCE(?7, host_id), heartbeat_at = ?5
  WHERE task_id = ?8`)
	// sqlTaskLogOrphan keeps a task.log line of a task that has no row: it
	// has no line number and no retention.
	sqlTaskLogOrphan     = prep(`INSERT INTO task_logs (task_id, stream, text, created_at) VALUES (?, ?, ?, ?)`)
	sqlTaskCancelRequest = prep(`UPDATE tasks SET cancel_requested_at = COALESCE(cancel_requested_at, ?1),
  cancel_reason = COALESCE(cancel_reason, ?2) WHERE task_id = ?3`)
	sqlTaskProcess    = prep(`UPDATE tasks SET process_pid = ?1, process_marker = ?2 WHERE task_id = ?3`)
	sqlTaskCompletion = prep(`UPDATE tasks SET completion_work_id = ?1 WHERE task_id = ?2 AND completion_work_id IS NULL`)
)

// taskEventStatus is the status each task transition sets when its payload
// names none.
var taskEventStatus = map[string]string{
	demiurge.EvTaskStarted:   demiurge.TaskRunning,
	demiurge.EvTaskSucceeded: demiurge.TaskSucceeded,
	demiurge.EvTaskFailed:    demiurge.TaskFailed,
	demiurge.EvTaskCancelled: demiurge.TaskCancelled,
	demiurge.EvTaskLost:      demiurge.TaskLost,
	demiurge.EvTaskBlocked:   demiurge.TaskBlocked,
}

func init() {
	register(projectTaskSubmitted, demiurge.EvTaskSubmitted)
	register(projectTaskTransition, demiurge.EvTaskStarted, demiurge.EvTaskSucceeded, demiurge.EvTaskFailed,
		demiurge.EvTaskCancelled, demiurge.EvTaskLost, demiurge.EvTaskBlocked)
	register(projectTaskLog, demiurge.EvTaskLog)
	register(projectTaskCancelRequested, demiurge.EvTaskCancelRequested)
	register(projectTaskProcess, demiurge.EvTaskProcessRecorded)
	register(projectTaskCompletionReady, demiurge.EvTaskCompletionReady)
	// task.completion_acknowledged is an event only.
}

func projectTaskSubmitted(t *wtx, e *demiurge.Event, p payload) error {
	id := e.AggregateID
	source, err := p.jsonOr("source")
	if err != nil {
		return err
	}
	errJSON, err := p.jsonOr("error")
	if err != nil {
		return err
	}
	_, err = t.exec(sqlTaskSubmit, id, p.str("kind"), p.strOr("status", demiurge.TaskQueued),
		p.strOr("root_task_id", id), p.nstr("parent_task_id"), p.nstr("owner_session_id"),
		p.nstr("owner_turn_id"), p.nstr("core_id"), p.nstr("host_id"), source,
		p.nstr("notify_policy"), p.nstr("result_ref"), errJSON, eventTime(e))
	return err
}

// projectTaskTransition: status is payload.status or taskEventStatus
// (task.started → running, task.blocked → blocked_needs_user); started_at is set by task.started,
// completed_at by the terminal events (not by task.blocked).
func projectTaskTransition(t *wtx, e *demiurge.Event, p payload) error {
	status := p.strOr("status", taskEventStatus[e.Type])
	errJSON, err := p.njson("error")
	if err != nil {
		return err
	}
	started := e.Type == demiurge.EvTaskStarted
	completed := e.Type != demiurge.EvTaskStarted && e.Type != demiurge.EvTaskBlocked
	_, err = t.exec(sqlTaskTransition, status, started, completed, p.nstr("result_ref"), eventTime(e),
		errJSON, p.nstr("host_id"), e.AggregateID)
	return err
}

// projectTaskLog keeps a task.log line like AppendTaskLogs does, with the
// default retention. The event itself stays in the log: writers that need a
// bounded footprint call AppendTaskLogs instead.
func projectTaskLog(t *wtx, e *demiurge.Event, p payload) error {
	line := demiurge.TaskLogLine{Stream: p.strOr("stream", "stdout"), Text: p.str("text"), CreatedAt: e.CreatedAt}
	found, err := t.appendTaskLogs(e.AggregateID, []demiurge.TaskLogLine{line}, DefaultTaskLogLines)
	if err != nil || found {
		return err
	}
	_, err = t.exec(sqlTaskLogOrphan, e.AggregateID, line.Stream, line.Text, eventTime(e))
	return err
}

// projectTaskCancelRequested keeps the first request's time and reason.
func projectTaskCancelRequested(t *wtx, e *demiurge.Event, p payload) error {
	_, err := t.exec(sqlTaskCancelRequest, eventTime(e), nullable(p.str("reason")), e.AggregateID)
	return err
}

// projectTaskProcess keeps the newest recorded process of a task.
func projectTaskProcess(t *wtx, e *demiurge.Event, p payload) error {
	_, err := t.exec(sqlTaskProcess, p.nnum("pid"), p.nstr("marker"), e.AggregateID)
	return err
}

// projectTaskCompletionReady marks the task of a completion (aggregate
// task_completion, payload task_id) as notified; the first one stays.
func projectTaskCompletionReady(t *wtx, e *demiurge.Event, p payload) error {
	if p.str("task_id") == "" {
		return nil
	}
	_, err := t.exec(sqlTaskCompletion, e.AggregateID, p.str("task_id"))
	return err
}
