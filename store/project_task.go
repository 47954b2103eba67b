package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

var (
	sqlTaskSubmit = `INSERT OR REPLACE INTO tasks
  (task_id, kind, status, root_task_id, parent_task_id, owner_session_id, owner_turn_id, core_id, host_id,
   source_json, notify_policy, result_ref, error_json, created_at, started_at, completed_at, heartbeat_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`
	// sqlTaskTransition: ?2 (started) and ?3 (completed) pick which
	// timestamps the event sets; ?5 is the event time.
	sqlTaskTransition = `UPDATE tasks SET status = ?1,
  started_at = CASE WHEN ?2 THEN ?5 ELSE started_at END,
  completed_at = CASE WHEN ?3 THEN ?5 ELSE completed_at END,
  result_ref = COALESCE(?4, result_ref), error_json = COALESCE(?6, error_json),
  host_id = COALESCE(?7, host_id), heartbeat_at = ?5, claim_host_id = NULL, claim_expires_at = NULL
  WHERE task_id = ?8`
	// sqlTaskLogOrphan keeps a task.log line of a task that has no row: it
	// has no line number and no retention.
	sqlTaskLogOrphan     = `INSERT INTO task_logs (task_id, stream, text, created_at) VALUES (?, ?, ?, ?)`
	sqlTaskCancelRequest = `UPDATE tasks SET cancel_requested_at = COALESCE(cancel_requested_at, ?1),
  cancel_reason = COALESCE(cancel_reason, ?2) WHERE task_id = ?3`
	sqlTaskProcess    = `UPDATE tasks SET process_pid = ?1, process_marker = ?2 WHERE task_id = ?3`
	sqlTaskCompletion = `UPDATE tasks SET completion_work_id = ?1 WHERE task_id = ?2 AND completion_work_id IS NULL`
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
	on(projectTaskSubmitted)
	onFamily(projectTaskTransition, demiurge.TaskStartedPayload{}, demiurge.TaskSucceededPayload{},
		demiurge.TaskFailedPayload{}, demiurge.TaskCancelledPayload{}, demiurge.TaskLostPayload{},
		demiurge.TaskBlockedPayload{})
	on(projectTaskLog)
	on(projectTaskCancelRequested)
	on(projectTaskProcess)
	on(projectTaskCompletionReady)
	// task.completion_acknowledged and task.write_scope_claimed are events only.
}

func projectTaskSubmitted(t *wtx, e evMeta, p demiurge.TaskSubmittedPayload) error {
	id := e.aggID
	source, err := objectJSON(p.Source, p.Source != nil)
	if err != nil {
		return err
	}
	errJSON, err := objectJSON(p.Error, p.Error != nil)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlTaskSubmit, id, p.Kind, cmp.Or(p.Status, demiurge.TaskQueued),
		cmp.Or(p.RootTaskID, id), nullable(p.ParentTaskID), nullable(p.OwnerSessionID),
		nullable(p.OwnerTurnID), nullable(p.CoreID), nullable(p.HostID), source,
		nullable(p.NotifyPolicy), nullable(p.ResultRef), errJSON, e.stamp())
	if err == nil && cmp.Or(p.Status, demiurge.TaskQueued) == demiurge.TaskQueued {
		if p.HostID == "" {
			t.noteQueued(id, demiurge.TopicTasks)
		} else {
			t.noteQueued(id, demiurge.TopicHostTasks(p.HostID))
		}
	}
	return err
}

// projectTaskTransition: status is the payload's or taskEventStatus
// (task.started → running, task.blocked → blocked_needs_user); started_at is set by task.started,
// completed_at by the terminal events (not by task.blocked).
func projectTaskTransition(t *wtx, e evMeta, p demiurge.TaskChange) error {
	status := cmp.Or(p.Status, taskEventStatus[e.typ])
	errJSON, err := optionalJSON(p.Error, p.Error != nil)
	if err != nil {
		return err
	}
	t.unnoteQueued(e.aggID)
	started := e.typ == demiurge.EvTaskStarted
	completed := e.typ != demiurge.EvTaskStarted && e.typ != demiurge.EvTaskBlocked
	_, err = t.exec(sqlTaskTransition, status, started, completed, nullable(p.ResultRef), e.stamp(),
		errJSON, nullable(p.HostID), e.aggID)
	return err
}

// projectTaskLog keeps a task.log line like AppendTaskLogs does, with the
// default retention. The event itself stays in the log: writers that need a
// bounded footprint call AppendTaskLogs instead.
func projectTaskLog(t *wtx, e evMeta, p demiurge.TaskLogPayload) error {
	line := demiurge.TaskLogLine{Stream: cmp.Or(p.Stream, "stdout"), Text: p.Text, CreatedAt: e.at}
	found, err := t.appendTaskLogs(e.aggID, []demiurge.TaskLogLine{line}, DefaultTaskLogLines)
	if err != nil || found {
		return err
	}
	_, err = t.exec(sqlTaskLogOrphan, e.aggID, line.Stream, line.Text, e.stamp())
	return err
}

// projectTaskCancelRequested keeps the first request's time and reason.
// The Host that runs the task is woken.
func projectTaskCancelRequested(t *wtx, e evMeta, p demiurge.TaskCancelRequestedPayload) error {
	if _, err := t.exec(sqlTaskCancelRequest, e.stamp(), nullable(p.Reason), e.aggID); err != nil {
		return err
	}
	var host ns
	err := t.queryRow(`SELECT host_id FROM tasks WHERE task_id = ?`, e.aggID).Scan(&host)
	if isNoRows(err) || err == nil && host.String == "" {
		return nil
	}
	if err == nil {
		t.note(demiurge.TopicCancel(host.String))
	}
	return err
}

// projectTaskProcess keeps the newest recorded process of a task.
func projectTaskProcess(t *wtx, e evMeta, p demiurge.TaskProcessRecordedPayload) error {
	var pid any
	if p.PID != 0 {
		pid = p.PID
	}
	_, err := t.exec(sqlTaskProcess, pid, nullable(p.Marker), e.aggID)
	return err
}

// projectTaskCompletionReady marks the task of a completion (aggregate
// task_completion, payload task_id) as notified; the first one stays.
func projectTaskCompletionReady(t *wtx, e evMeta, p demiurge.TaskCompletionReadyPayload) error {
	if p.TaskID == "" {
		return nil
	}
	_, err := t.exec(sqlTaskCompletion, e.aggID, p.TaskID)
	return err
}
