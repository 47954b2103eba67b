package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

// The task projection of a group of batches on PostgreSQL (appendGroup) in
// two statements instead of one per event: every task.submitted row in one
// upsert, then every transition in one update. They do what
// projectTaskSubmitted and projectTaskTransition do event by event.
const (
	sqlTaskSubmitRows = `INSERT INTO tasks
  (task_id, kind, status, root_task_id, parent_task_id, owner_session_id, owner_turn_id, core_id, host_id,
   source_json, notify_policy, result_ref, error_json, created_at, started_at, completed_at, heartbeat_at)
  SELECT r.id, r.kind, r.status, r.root, NULLIF(r.parent, ''), NULLIF(r.session, ''), NULLIF(r.turn, ''),
    NULLIF(r.core, ''), NULLIF(r.host, ''), r.source, NULLIF(r.notify, ''), NULLIF(r.result, ''), r.err, r.at, NULL, NULL, NULL
  FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
    ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
    AS r(id, kind, status, root, parent, session, turn, core, host, source, notify, result, err, at)
  ON CONFLICT (task_id) DO UPDATE SET kind = excluded.kind, status = excluded.status, root_task_id = excluded.root_task_id,
    parent_task_id = excluded.parent_task_id, owner_session_id = excluded.owner_session_id,
    owner_turn_id = excluded.owner_turn_id, core_id = excluded.core_id, host_id = excluded.host_id,
    source_json = excluded.source_json, notify_policy = excluded.notify_policy, result_ref = excluded.result_ref,
    error_json = excluded.error_json, created_at = excluded.created_at, started_at = NULL, completed_at = NULL,
    heartbeat_at = NULL, log_lines = DEFAULT, cancel_requested_at = DEFAULT, cancel_reason = DEFAULT,
    process_pid = DEFAULT, process_marker = DEFAULT, completion_work_id = DEFAULT, claim_host_id = DEFAULT,
    claim_expires_at = DEFAULT`
	sqlTaskTransitionRows = `UPDATE tasks SET status = r.status,
  started_at = CASE WHEN r.started THEN r.at ELSE tasks.started_at END,
  completed_at = CASE WHEN r.completed THEN r.at ELSE tasks.completed_at END,
  result_ref = COALESCE(NULLIF(r.result, ''), tasks.result_ref), error_json = COALESCE(NULLIF(r.err, ''), tasks.error_json),
  host_id = COALESCE(NULLIF(r.host, ''), tasks.host_id), heartbeat_at = r.at, claim_host_id = NULL, claim_expires_at = NULL
  FROM unnest(?::text[], ?::text[], ?::bool[], ?::bool[], ?::text[], ?::text[], ?::text[], ?::text[])
    AS r(id, status, started, completed, result, at, err, host)
  WHERE tasks.task_id = r.id`
)

// taskTransition reports whether typ is a task transition event.
func taskTransition(typ string) bool {
	_, ok := taskEventStatus[typ]
	return ok
}

// projectTasksBulk projects events (in order) when every one is a
// task.submitted or a task transition, no task is submitted twice or
// moved twice, and a task submitted here is submitted before it moves;
// otherwise it does nothing and ok is false.
func (t *wtx) projectTasksBulk(events []demiurge.Event) (ok bool, err error) {
	submitted, moved := map[string]bool{}, map[string]bool{}
	for _, e := range events {
		switch {
		case e.Type == demiurge.EvTaskSubmitted:
			if submitted[e.AggregateID] || moved[e.AggregateID] {
				return false, nil
			}
			submitted[e.AggregateID] = true
		case taskTransition(e.Type):
			if moved[e.AggregateID] {
				return false, nil
			}
			moved[e.AggregateID] = true
		default:
			return false, nil
		}
	}
	var sub [14][]string
	var tr struct {
		ids, status, result, at, errs, host []string
		started, completed                  []bool
	}
	for _, e := range events {
		meta := evMeta{typ: e.Type, aggID: e.AggregateID, seq: e.Seq, at: e.CreatedAt}
		if e.Type == demiurge.EvTaskSubmitted {
			var p demiurge.TaskSubmittedPayload
			if err := e.Decode(&p); err != nil {
				return false, nil
			}
			source, err := objectJSON(p.Source, p.Source != nil)
			if err != nil {
				return false, nil
			}
			errJSON, err := objectJSON(p.Error, p.Error != nil)
			if err != nil {
				return false, nil
			}
			status := cmp.Or(p.Status, demiurge.TaskQueued)
			for i, v := range []string{meta.aggID, p.Kind, status, cmp.Or(p.RootTaskID, meta.aggID), p.ParentTaskID,
				p.OwnerSessionID, p.OwnerTurnID, p.CoreID, p.HostID, source, p.NotifyPolicy, p.ResultRef, errJSON, meta.stamp()} {
				sub[i] = append(sub[i], v)
			}
			if status == demiurge.TaskQueued {
				if p.HostID == "" {
					t.noteQueued(meta.aggID, demiurge.TopicTasks)
				} else {
					t.noteQueued(meta.aggID, demiurge.TopicHostTasks(p.HostID))
				}
			}
			continue
		}
		var p demiurge.TaskChange
		if err := e.Decode(&p); err != nil {
			return false, nil
		}
		errJSON := ""
		if p.Error != nil {
			if errJSON, err = marshalJSON(p.Error); err != nil {
				return false, nil
			}
		}
		t.unnoteQueued(meta.aggID)
		tr.ids = append(tr.ids, meta.aggID)
		tr.status = append(tr.status, cmp.Or(p.Status, taskEventStatus[e.Type]))
		tr.started = append(tr.started, e.Type == demiurge.EvTaskStarted)
		tr.completed = append(tr.completed, e.Type != demiurge.EvTaskStarted && e.Type != demiurge.EvTaskBlocked)
		tr.result, tr.at = append(tr.result, p.ResultRef), append(tr.at, meta.stamp())
		tr.errs, tr.host = append(tr.errs, errJSON), append(tr.host, p.HostID)
	}
	if len(sub[0]) > 0 {
		args := make([]any, len(sub))
		for i := range sub {
			args[i] = sub[i]
		}
		if _, err := t.exec(sqlTaskSubmitRows, args...); err != nil {
			return false, err
		}
	}
	if len(tr.ids) > 0 {
		if _, err := t.exec(sqlTaskTransitionRows, tr.ids, tr.status, tr.started, tr.completed, tr.result, tr.at, tr.errs, tr.host); err != nil {
			return false, err
		}
	}
	return true, nil
}
