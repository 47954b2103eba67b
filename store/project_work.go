package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

var (
	sqlWorkEnqueue = `INSERT OR REPLACE INTO runtime_work_items
  (work_id, kind, status, owner_session_id, owner_turn_id, parent_work_id, claim_id, owner_id, claimed_at,
   lease_expires_at, attempts, next_attempt_at, last_error, external_ref, payload_json, created_at, updated_at, completed_at)
  VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, ?, ?, NULL, ?, ?, ?, ?, NULL)`
	sqlWorkUpdate = `UPDATE runtime_work_items SET
  status = COALESCE(?1, status),
  claim_id = CASE WHEN ?2 THEN NULL ELSE COALESCE(?3, claim_id) END,
  owner_id = CASE WHEN ?2 THEN NULL ELSE COALESCE(?4, owner_id) END,
  claimed_at = CASE WHEN ?2 THEN NULL ELSE COALESCE(?5, claimed_at) END,
  lease_expires_at = CASE WHEN ?2 THEN NULL ELSE COALESCE(?6, lease_expires_at) END,
  attempts = COALESCE(?7, attempts),
  next_attempt_at = ?8,
  last_error = COALESCE(?9, last_error),
  external_ref = COALESCE(?10, external_ref),
  updated_at = ?11,
  completed_at = CASE WHEN ?12 THEN ?11 ELSE completed_at END
  WHERE work_id = ?13`
)

// workEventStatus is the status each work.* event sets when its payload
// names none ("" keeps the current status).
var workEventStatus = map[string]string{
	demiurge.EvWorkClaimed:      demiurge.WorkClaimed,
	demiurge.EvWorkRunning:      demiurge.WorkRunning,
	demiurge.EvWorkSending:      demiurge.WorkSending,
	demiurge.EvWorkHeartbeat:    "",
	demiurge.EvWorkSucceeded:    demiurge.WorkSucceeded,
	demiurge.EvWorkFailed:       demiurge.WorkFailed,
	demiurge.EvWorkCancelled:    demiurge.WorkCancelled,
	demiurge.EvWorkUnknown:      demiurge.WorkUnknown,
	demiurge.EvWorkAcknowledged: demiurge.WorkAcknowledged,
	demiurge.EvWorkCorrupt:      demiurge.WorkCorrupt,
	demiurge.EvWorkRecovered:    demiurge.WorkRetryScheduled,
}

// WorkTerminal reports whether a durable work status is terminal.
func WorkTerminal(status string) bool {
	switch status {
	case demiurge.WorkSucceeded, demiurge.WorkFailed, demiurge.WorkCancelled, demiurge.WorkAcknowledged, demiurge.WorkCorrupt:
		return true
	}
	return false
}

// workOverwritable reports whether a work item in status may still change:
// terminal statuses and unknown are final.
func workOverwritable(status string) bool {
	return !WorkTerminal(status) && status != demiurge.WorkUnknown
}

func init() {
	on(projectWorkEnqueued)
	onFamily(projectWorkUpdate, demiurge.WorkClaimedPayload{}, demiurge.WorkRunningPayload{},
		demiurge.WorkSendingPayload{}, demiurge.WorkHeartbeatPayload{}, demiurge.WorkSucceededPayload{},
		demiurge.WorkFailedPayload{}, demiurge.WorkCancelledPayload{}, demiurge.WorkUnknownPayload{},
		demiurge.WorkAcknowledgedPayload{}, demiurge.WorkCorruptPayload{}, demiurge.WorkRecoveredPayload{})
}

func projectWorkEnqueued(t *wtx, e evMeta, p demiurge.WorkEnqueuedPayload) error {
	body, err := marshalJSON(p.Payload)
	if err != nil {
		return err
	}
	at := e.stamp()
	_, err = t.exec(sqlWorkEnqueue, e.aggID, p.Kind, cmp.Or(p.Status, demiurge.WorkQueued),
		nullable(p.OwnerSessionID), nullable(p.OwnerTurnID), nullable(p.ParentWorkID), p.Attempts,
		storedTime(p.NextAttemptAt), nullable(p.ExternalRef), body, at, at)
	if err == nil && p.NextAttemptAt == "" && cmp.Or(p.Status, demiurge.WorkQueued) == demiurge.WorkQueued {
		t.note(demiurge.TopicWork(p.Kind))
	}
	return err
}

// projectWorkUpdate applies a work.* transition: provided fields are
// COALESCEd in, next_attempt_at is overwritten (NULL when absent),
// clear_claim=true drops claim, owner and lease, and completed_at is set when
// the resulting status is terminal.
func projectWorkUpdate(t *wtx, e evMeta, p demiurge.WorkChange) error {
	status := cmp.Or(p.Status, workEventStatus[e.typ])
	_, err := t.exec(sqlWorkUpdate, nullable(status), p.ClearClaim, nullable(p.ClaimID),
		nullable(p.OwnerID), storedTime(p.ClaimedAt), storedTime(p.LeaseExpiresAt), optionalInt(p.Attempts),
		storedTime(p.NextAttemptAt), nullable(p.LastError), nullable(p.ExternalRef), e.stamp(),
		WorkTerminal(status), e.aggID)
	return err
}
