package demiurge

// This file holds the payloads of the events kept for the record: the
// store projects none of them but artifact.stored.

// ArtifactStoredPayload records a stored artifact (aggregate artifact
// "<artifact id>").
type ArtifactStoredPayload struct {
	OwnerTurnID string         `json:"owner_turn_id,omitempty"`
	Kind        string         `json:"kind"`
	URI         string         `json:"uri"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// PrincipalOwnerLookupDeniedPayload records an owned lookup that found
// nothing the scope may see (aggregate principal_scope "<principal id>").
type PrincipalOwnerLookupDeniedPayload struct {
	Reason      string `json:"reason"`
	LookupID    string `json:"lookup_id"`
	PrincipalID string `json:"principal_id"`
	Authority   string `json:"authority"`
	Table       string `json:"table"`
}

// PrincipalOperatorIssuedPayload records the issue of an operator scope.
type PrincipalOperatorIssuedPayload struct {
	Reason              string `json:"reason"`
	ActiveSessionID     string `json:"active_session_id,omitempty"`
	VisibleSessionCount int    `json:"visible_session_count,omitempty"`
}

// HostStartedPayload records a Host process that registered (aggregate
// host "<host id>").
type HostStartedPayload struct {
	PID         int    `json:"pid"`
	Hostname    string `json:"hostname"`
	StartMarker string `json:"start_marker"`
}

// HostStoppedPayload records a Host that stopped; Reason "gone" (with its
// PID and Hostname) when reconciliation found it vanished.
type HostStoppedPayload struct {
	Reason   string `json:"reason,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// HostReconciledPayload counts what one reconciliation changed.
type HostReconciledPayload struct {
	GoneHosts         int `json:"gone_hosts"`
	TurnsLost         int `json:"turns_lost"`
	TasksLost         int `json:"tasks_lost"`
	DeliveriesUnknown int `json:"deliveries_unknown"`
	LeasesReleased    int `json:"leases_released"`
	WorkRecovered     int `json:"work_recovered"`
	WorkUnknown       int `json:"work_unknown"`
	WorkCorrupt       int `json:"work_corrupt"`
	WorkDeferred      int `json:"work_deferred"`
	ClaimsReleased    int `json:"claims_released,omitempty"`
}

// MCPServerUnavailable is the payload of the events of an MCP server a
// turn could not use (aggregate mcp_server "<core>:<server>").
type MCPServerUnavailable struct {
	Server       string `json:"server"`
	CoreID       string `json:"core_id"`
	CoreRevision string `json:"core_revision"`
	SessionID    string `json:"session_id"`
	TurnID       string `json:"turn_id"`
	State        string `json:"state"`
	Error        string `json:"error"`
	Capability   string `json:"capability"`
	Transport    string `json:"transport"`
}

// The MCP server events, one type each over MCPServerUnavailable: its
// connect was denied, or it failed.
type (
	MCPServerDeniedPayload MCPServerUnavailable
	MCPServerFailedPayload MCPServerUnavailable
)

// AgentSpawnTrail is the payload of the delegation trail (aggregate
// agent_spawn "<task id>", or the parent turn id for a rejection).
type AgentSpawnTrail struct {
	TaskID          string     `json:"task_id,omitempty"`
	ParentSessionID string     `json:"parent_session_id"`
	ParentTurnID    string     `json:"parent_turn_id"`
	ParentSlot      string     `json:"parent_slot,omitempty"`
	ChildCoreID     string     `json:"child_core_id"`
	ChildSessionID  string     `json:"child_session_id,omitempty"`
	ChildTurnID     string     `json:"child_turn_id,omitempty"`
	ChildOutcome    TurnStatus `json:"child_outcome,omitempty"`
	Error           string     `json:"error,omitempty"`
}

// The delegation trail, one type each over AgentSpawnTrail.
type (
	AgentSpawnStartedPayload   AgentSpawnTrail
	AgentSpawnCompletedPayload AgentSpawnTrail
	AgentSpawnBlockedPayload   AgentSpawnTrail
	AgentSpawnFailedPayload    AgentSpawnTrail
	AgentSpawnRejectedPayload  AgentSpawnTrail
)

// As returns t as the payload of the delegation trail event typ.
func (t AgentSpawnTrail) As(typ string) (EventPayload, error) {
	switch typ {
	case EvAgentSpawnStarted:
		return AgentSpawnStartedPayload(t), nil
	case EvAgentSpawnCompleted:
		return AgentSpawnCompletedPayload(t), nil
	case EvAgentSpawnBlocked:
		return AgentSpawnBlockedPayload(t), nil
	case EvAgentSpawnFailed:
		return AgentSpawnFailedPayload(t), nil
	case EvAgentSpawnRejected:
		return AgentSpawnRejectedPayload(t), nil
	}
	return nil, notOfFamily(typ, "delegation trail")
}

func (ArtifactStoredPayload) Type() string             { return EvArtifactStored }
func (PrincipalOwnerLookupDeniedPayload) Type() string { return EvPrincipalOwnerLookupDenied }
func (PrincipalOperatorIssuedPayload) Type() string    { return EvPrincipalOperatorIssued }
func (HostStartedPayload) Type() string                { return EvHostStarted }
func (HostStoppedPayload) Type() string                { return EvHostStopped }
func (HostReconciledPayload) Type() string             { return EvHostReconciled }
func (MCPServerDeniedPayload) Type() string            { return EvMCPServerDenied }
func (MCPServerFailedPayload) Type() string            { return EvMCPServerFailed }
func (AgentSpawnStartedPayload) Type() string          { return EvAgentSpawnStarted }
func (AgentSpawnCompletedPayload) Type() string        { return EvAgentSpawnCompleted }
func (AgentSpawnBlockedPayload) Type() string          { return EvAgentSpawnBlocked }
func (AgentSpawnFailedPayload) Type() string           { return EvAgentSpawnFailed }
func (AgentSpawnRejectedPayload) Type() string         { return EvAgentSpawnRejected }
