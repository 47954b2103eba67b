package store

import (
	"github.com/demiurge/demiurge"
)

var (
	sqlArtifactStore = prep(`INSERT OR REPLACE INTO artifacts
  (artifact_id, owner_turn_id, kind, uri, metadata_json, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
	sqlSchedulerUpsert = prep(`INSERT OR REPLACE INTO scheduler_instances
  (core_id, schedule_id, due_at, task_id, claim_status, idempotency_key, claim_id, lease_expires_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	sqlSchedulerStatus = prep(`UPDATE scheduler_instances SET claim_status = ?
  WHERE core_id = ? AND schedule_id = ? AND due_at = ?`)
)

func init() {
	register(projectArtifactStored, demiurge.EvArtifactStored)
	register(projectSchedulerUpsert, demiurge.EvSchedulerScheduled, demiurge.EvSchedulerClaimed)
	register(projectSchedulerStatus, demiurge.EvSchedulerCompleted, demiurge.EvSchedulerError)
	// principal_scope.* and host.* are audit events without a projection.
}

func projectArtifactStored(t *wtx, e *demiurge.Event, p payload) error {
	meta, err := p.jsonOr("metadata")
	if err != nil {
		return err
	}
	_, err = t.exec(sqlArtifactStore, e.AggregateID, p.nstr("owner_turn_id"), p.str("kind"), p.str("uri"), meta, eventTime(e))
	return err
}

// schedulerKey reads the (core_id, schedule_id, due_at) key of a scheduler
// instance; due_at is normalised like every stored time.
func schedulerKey(e *demiurge.Event, p payload) (core, schedule string, due any, err error) {
	core, schedule, due = p.str("core_id"), p.str("schedule_id"), p.ntime("due_at")
	if core == "" || schedule == "" || due == nil {
		return "", "", nil, demiurge.Errorf(demiurge.EINVALID, "%s requires core_id, schedule_id and due_at", e.Type)
	}
	return core, schedule, due, nil
}

func projectSchedulerUpsert(t *wtx, e *demiurge.Event, p payload) error {
	core, schedule, due, err := schedulerKey(e, p)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlSchedulerUpsert, core, schedule, due, p.nstr("task_id"), p.strOr("claim_status", suffix(e.Type)),
		p.nstr("idempotency_key"), p.nstr("claim_id"), p.ntime("lease_expires_at"))
	return err
}

func projectSchedulerStatus(t *wtx, e *demiurge.Event, p payload) error {
	core, schedule, due, err := schedulerKey(e, p)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlSchedulerStatus, p.strOr("claim_status", suffix(e.Type)), core, schedule, due)
	return err
}
