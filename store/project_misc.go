package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

var (
	sqlArtifactStore = `INSERT OR REPLACE INTO artifacts
  (artifact_id, owner_turn_id, kind, uri, metadata_json, created_at) VALUES (?, ?, ?, ?, ?, ?)`
	sqlSchedulerUpsert = `INSERT OR REPLACE INTO scheduler_instances
  (core_id, schedule_id, due_at, task_id, claim_status, idempotency_key, claim_id, lease_expires_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlSchedulerStatus = `UPDATE scheduler_instances SET claim_status = ?
  WHERE core_id = ? AND schedule_id = ? AND due_at = ?`
)

func init() {
	on(projectArtifactStored)
	onFamily(projectSchedulerUpsert, demiurge.SchedulerScheduledPayload{}, demiurge.SchedulerClaimedPayload{})
	onFamily(projectSchedulerStatus, demiurge.SchedulerCompletedPayload{}, demiurge.SchedulerErrorPayload{})
	// principal_scope.*, host.*, mcp.* and agent_spawn.* are audit events
	// without a projection.
}

func projectArtifactStored(t *wtx, e evMeta, p demiurge.ArtifactStoredPayload) error {
	meta, err := marshalJSON(p.Metadata)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlArtifactStore, e.aggID, nullable(p.OwnerTurnID), p.Kind, p.URI, meta, e.stamp())
	return err
}

// schedulerKey reads the (core_id, schedule_id, due_at) key of a scheduler
// instance; due_at is normalised like every stored time.
func schedulerKey(e evMeta, p demiurge.SchedulerInstance) (due any, err error) {
	due = storedTime(p.DueAt)
	if p.CoreID == "" || p.ScheduleID == "" || due == nil {
		return nil, demiurge.Errorf(demiurge.EINVALID, "%s requires core_id, schedule_id and due_at", e.typ)
	}
	return due, nil
}

func projectSchedulerUpsert(t *wtx, e evMeta, p demiurge.SchedulerInstance) error {
	due, err := schedulerKey(e, p)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlSchedulerUpsert, p.CoreID, p.ScheduleID, due, nullable(p.TaskID), cmp.Or(p.ClaimStatus, suffix(e.typ)),
		nullable(p.IdempotencyKey), nullable(p.ClaimID), storedTime(p.LeaseExpiresAt))
	return err
}

func projectSchedulerStatus(t *wtx, e evMeta, p demiurge.SchedulerInstance) error {
	due, err := schedulerKey(e, p)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlSchedulerStatus, cmp.Or(p.ClaimStatus, suffix(e.typ)), p.CoreID, p.ScheduleID, due)
	return err
}
