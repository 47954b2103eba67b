package demiurge

// SessionTarget holds the session facts kept in sessions.target_json. The
// session events carry them at the top level of their payload; an absent
// key leaves the stored value as it is.
type SessionTarget struct {
	ConversationKey string         `json:"conversation_key,omitempty"`
	Workspace       string         `json:"workspace,omitempty"`
	Provider        string         `json:"provider,omitempty"`
	Model           string         `json:"model,omitempty"`
	CoreRevision    string         `json:"core_revision,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	// BootstrapContext is the bootstrap snapshot; BootstrapInitialized
	// records that the bootstrap phase has run.
	BootstrapContext     string `json:"bootstrap_context,omitempty"`
	BootstrapInitialized bool   `json:"bootstrap_context_initialized,omitempty"`
	CompactionSummaryID  string `json:"compaction_summary_id,omitempty"`
	// CompactedUntilMessageID sets the compaction cutoff; a pointer to ""
	// clears it.
	CompactedUntilMessageID *string        `json:"compacted_until_message_id,omitempty"`
	PrincipalScope          map[string]any `json:"principal_scope,omitempty"`
	// Target carries further target keys.
	Target map[string]any `json:"target,omitempty"`
}

// SessionOwnerPayload is the owner of a new session, written once.
type SessionOwnerPayload struct {
	Kind            string `json:"kind"`
	PrincipalID     string `json:"principal_id"`
	Channel         string `json:"channel"`
	ConversationKey string `json:"conversation_key"`
	OriginSessionID string `json:"origin_session_id"`
	OriginTurnID    string `json:"origin_turn_id"`
}

// SessionCreatedPayload creates (or re-creates) a session. A session
// created without an owner is owned by legacy_local.
type SessionCreatedPayload struct {
	CoreID  string `json:"core_id"`
	Status  string `json:"status,omitempty"` // default active
	Channel string `json:"channel,omitempty"`
	Title   string `json:"title,omitempty"`
	SessionTarget
	Owner *SessionOwnerPayload `json:"owner,omitempty"`
}

// SessionUpdatedPayload changes a session's facts; absent keys are kept.
type SessionUpdatedPayload struct {
	CoreID  string `json:"core_id,omitempty"`
	Status  string `json:"status,omitempty"`
	Channel string `json:"channel,omitempty"`
	Title   string `json:"title,omitempty"`
	SessionTarget
	// Touch moves updated_at; absent: true for session.updated, false for
	// session.resumed.
	Touch *bool `json:"touch,omitempty"`
}

// SessionResumedPayload records the facts of a request that resumed a
// session; it has the keys of session.updated.
type SessionResumedPayload SessionUpdatedPayload

// SessionBindingReboundPayload moves the conversation (Channel,
// ConversationKey) to the event's session.
type SessionBindingReboundPayload struct {
	CoreID  string `json:"core_id,omitempty"`
	Channel string `json:"channel"`
	SessionTarget
}

// SessionBindingConflictPayload records that Loser, created for a
// conversation that Winner had bound first, gives way.
type SessionBindingConflictPayload struct {
	Winner          string `json:"winner"`
	Loser           string `json:"loser"`
	CoreID          string `json:"core_id"`
	Channel         string `json:"channel"`
	ConversationKey string `json:"conversation_key"`
}

func (SessionCreatedPayload) Type() string         { return EvSessionCreated }
func (SessionUpdatedPayload) Type() string         { return EvSessionUpdated }
func (SessionResumedPayload) Type() string         { return EvSessionResumed }
func (SessionBindingReboundPayload) Type() string  { return EvSessionBindingRebound }
func (SessionBindingConflictPayload) Type() string { return EvSessionBindingConflict }
