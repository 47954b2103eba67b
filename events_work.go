package demiurge

// WorkEnqueuedPayload enqueues a durable work item (aggregate work "<work
// id>"). Payload is the item's own payload object, free-form per kind;
// times are in TimeLayout.
type WorkEnqueuedPayload struct {
	Kind           string `json:"kind"`
	Status         string `json:"status,omitempty"` // default queued
	OwnerSessionID string `json:"owner_session_id,omitempty"`
	OwnerTurnID    string `json:"owner_turn_id,omitempty"`
	ParentWorkID   string `json:"parent_work_id,omitempty"`
	NextAttemptAt  string `json:"next_attempt_at,omitempty"`
	ExternalRef    string `json:"external_ref,omitempty"`
	Attempts       int    `json:"attempts,omitempty"`
	Payload        any    `json:"payload,omitempty"`
}

// WorkChange is the payload of the work item transitions: given fields
// replace the stored ones, except NextAttemptAt, which is always replaced
// (absent: none); ClearClaim drops the claim, its owner and lease. Status
// defaults to the one the event type names (heartbeat: unchanged).
type WorkChange struct {
	Status         string `json:"status,omitempty"`
	ClaimID        string `json:"claim_id,omitempty"`
	OwnerID        string `json:"owner_id,omitempty"`
	ClaimedAt      string `json:"claimed_at,omitempty"`
	LeaseExpiresAt string `json:"lease_expires_at,omitempty"`
	Attempts       *int   `json:"attempts,omitempty"`
	NextAttemptAt  string `json:"next_attempt_at,omitempty"`
	LastError      string `json:"last_error,omitempty"`
	ExternalRef    string `json:"external_ref,omitempty"`
	ClearClaim     bool   `json:"clear_claim,omitempty"`
}

// The work item transitions, one type each over WorkChange.
type (
	WorkClaimedPayload      WorkChange
	WorkRunningPayload      WorkChange
	WorkSendingPayload      WorkChange
	WorkHeartbeatPayload    WorkChange
	WorkSucceededPayload    WorkChange
	WorkFailedPayload       WorkChange
	WorkCancelledPayload    WorkChange
	WorkUnknownPayload      WorkChange
	WorkAcknowledgedPayload WorkChange
	WorkCorruptPayload      WorkChange
	WorkRecoveredPayload    WorkChange
)

// As returns c as the payload of the work item transition typ.
func (c WorkChange) As(typ string) (EventPayload, error) {
	switch typ {
	case EvWorkClaimed:
		return WorkClaimedPayload(c), nil
	case EvWorkRunning:
		return WorkRunningPayload(c), nil
	case EvWorkSending:
		return WorkSendingPayload(c), nil
	case EvWorkHeartbeat:
		return WorkHeartbeatPayload(c), nil
	case EvWorkSucceeded:
		return WorkSucceededPayload(c), nil
	case EvWorkFailed:
		return WorkFailedPayload(c), nil
	case EvWorkCancelled:
		return WorkCancelledPayload(c), nil
	case EvWorkUnknown:
		return WorkUnknownPayload(c), nil
	case EvWorkAcknowledged:
		return WorkAcknowledgedPayload(c), nil
	case EvWorkCorrupt:
		return WorkCorruptPayload(c), nil
	case EvWorkRecovered:
		return WorkRecoveredPayload(c), nil
	}
	return nil, notOfFamily(typ, "work item transition")
}

func (WorkEnqueuedPayload) Type() string     { return EvWorkEnqueued }
func (WorkClaimedPayload) Type() string      { return EvWorkClaimed }
func (WorkRunningPayload) Type() string      { return EvWorkRunning }
func (WorkSendingPayload) Type() string      { return EvWorkSending }
func (WorkHeartbeatPayload) Type() string    { return EvWorkHeartbeat }
func (WorkSucceededPayload) Type() string    { return EvWorkSucceeded }
func (WorkFailedPayload) Type() string       { return EvWorkFailed }
func (WorkCancelledPayload) Type() string    { return EvWorkCancelled }
func (WorkUnknownPayload) Type() string      { return EvWorkUnknown }
func (WorkAcknowledgedPayload) Type() string { return EvWorkAcknowledged }
func (WorkCorruptPayload) Type() string      { return EvWorkCorrupt }
func (WorkRecoveredPayload) Type() string    { return EvWorkRecovered }
