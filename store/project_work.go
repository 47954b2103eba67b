package store

import (
	"github.com/demiurge/demiurge"
)

var (
	sqlWorkEnqueue = prep(`INSERT OR REPLACE INTO runtime_work_items
  (work_id, kind, status, owner_session_id, owner_turn_id, parent_work_id, claim_id, owner_id, claimed_at,
   lease_expires_at, attempts, next_attempt_at, last_error, external_ref, payload_json, created_at, updated_at, completed_at)
  VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, ?, ?, NULL, ?, ?, ?, ?, NULL)`)
	sqlWorkUpdate = prep(`UPDATE runtime_work_items SET
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
  WHERE work_id = ?13`)
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
	register(projectWorkEnqueued, demiurge.EvWorkEnqueued)
	types := make([]string, 0, len(workEventStatus))
	for typ := range workEventStatus {
		types = append(types, typ)
	}
	register(projectWorkUpdate, types...)
}

func projectWorkEnqueued(t *wtx, e *demiurge.Event, p payload) error {
	body, err := p.jsonOr("payload")
	if err != nil {
		return err
	}
	attempts, _ := p.num("attempts")
	at := eventTime(e)
	_, err = t.exec(sqlWorkEnqueue, e.AggregateID, p.str("kind"), p.strOr("status", demiurge.WorkQueued),
		p.nstr("owner_session_id"), p.nstr("owner_turn_id"), p.nstr("parent_work_id"), attempts,
		p.ntime("next_attempt_at"), p.nstr("external_ref"), body, at, at)
	return err
}

// projectWorkUpdate applies a work.* transition: provided fields are
// COALESCEd in, next_attempt_at is overwritten (NULL when absent),
// clear_claim=true drops claim, owner and lease, and completed_at is set when
// the resulting status is terminal.
func projectWorkUpdate(t *wtx, e *demiurge.Event, p payload) error {
	status := p.strOr("status", workEventStatus[e.Type])
	_, err := t.exec(sqlWorkUpdate, nullable(status), p.boolean("clear_claim", false), p.nstr("claim_id"),
		p.nstr("owner_id"), p.ntime("claimed_at"), p.ntime("lease_expires_at"), p.nnum("attempts"),
		p.ntime("next_attempt_at"), p.nstr("last_error"), p.nstr("external_ref"), eventTime(e),
		WorkTerminal(status), e.AggregateID)
	return err
}
