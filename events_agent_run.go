package demiurge

// The synchronous child turns of ctx.agents.run (audit only), aggregate
// agent_run "<agent_run id>".
const (
	AggAgentRun = "agent_run"

	EvAgentRunStarted   = "agent_run.started"
	EvAgentRunCompleted = "agent_run.completed"
)

// AgentRunStartedPayload is recorded before the child turn starts.
type AgentRunStartedPayload struct {
	TurnID      string `json:"turn_id"`
	Slot        string `json:"slot"`
	AgentRunID  string `json:"agent_run_id"`
	ChildCoreID string `json:"child_core_id"`
}

// AgentRunCompletedPayload is recorded when the child turn ended (or could
// not run: Error).
type AgentRunCompletedPayload struct {
	TurnID         string     `json:"turn_id"`
	Slot           string     `json:"slot"`
	AgentRunID     string     `json:"agent_run_id"`
	ChildCoreID    string     `json:"child_core_id"`
	ChildSessionID string     `json:"child_session_id"`
	ChildTurnID    string     `json:"child_turn_id,omitempty"`
	ChildOutcome   TurnStatus `json:"child_outcome,omitempty"`
	Chars          int        `json:"chars"`
	Error          string     `json:"error,omitempty"`
}

func (AgentRunStartedPayload) Type() string   { return EvAgentRunStarted }
func (AgentRunCompletedPayload) Type() string { return EvAgentRunCompleted }
