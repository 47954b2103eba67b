package demiurge

// ScheduleState is the scheduler's record of one schedule, carried whole
// by every scheduler.* event of the schedule, so that the newest one is
// the current state. Times are in TimeLayout.
type ScheduleState struct {
	// HeadDue is the newest occurrence enqueued from the cron expression;
	// HeadSig the signature it was computed under.
	HeadDue string `json:"head_due,omitempty"`
	HeadSig string `json:"head_sig,omitempty"`
	// The last run started: its occurrence, run id and outcome.
	LastDue      string `json:"last_due,omitempty"`
	LastRunID    string `json:"last_run_id,omitempty"`
	LastStatus   string `json:"last_status,omitempty"`
	LastError    string `json:"last_error,omitempty"`
	LastSkipped  int    `json:"last_skipped,omitempty"`
	LastManual   bool   `json:"last_manual,omitempty"`
	LastFinished string `json:"last_finished,omitempty"`
}

// SchedulerInstance is the payload of the scheduler events about one
// occurrence (aggregate scheduler "<core>:<schedule>"), keyed by (CoreID,
// ScheduleID, DueAt). ClaimStatus defaults to the event type's suffix.
type SchedulerInstance struct {
	CoreID         string `json:"core_id"`
	ScheduleID     string `json:"schedule_id"`
	DueAt          string `json:"due_at"`
	ClaimStatus    string `json:"claim_status,omitempty"`
	TaskID         string `json:"task_id,omitempty"`
	WorkID         string `json:"work_id,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	ClaimID        string `json:"claim_id,omitempty"`
	LeaseExpiresAt string `json:"lease_expires_at,omitempty"`
	Skipped        int    `json:"skipped,omitempty"`
	Manual         bool   `json:"manual,omitempty"`
	Reason         string `json:"reason,omitempty"`
	Error          string `json:"error,omitempty"`
	// State is the schedule's state after the event.
	State ScheduleState `json:"schedule_state"`
}

// The scheduler events, one type each over SchedulerInstance.
type (
	SchedulerScheduledPayload SchedulerInstance
	SchedulerClaimedPayload   SchedulerInstance
	SchedulerCompletedPayload SchedulerInstance
	SchedulerErrorPayload     SchedulerInstance
)

// As returns in as the payload of the scheduler event typ.
func (in SchedulerInstance) As(typ string) (EventPayload, error) {
	switch typ {
	case EvSchedulerScheduled:
		return SchedulerScheduledPayload(in), nil
	case EvSchedulerClaimed:
		return SchedulerClaimedPayload(in), nil
	case EvSchedulerCompleted:
		return SchedulerCompletedPayload(in), nil
	case EvSchedulerError:
		return SchedulerErrorPayload(in), nil
	}
	return nil, notOfFamily(typ, "scheduler")
}

func (SchedulerScheduledPayload) Type() string { return EvSchedulerScheduled }
func (SchedulerClaimedPayload) Type() string   { return EvSchedulerClaimed }
func (SchedulerCompletedPayload) Type() string { return EvSchedulerCompleted }
func (SchedulerErrorPayload) Type() string     { return EvSchedulerError }
