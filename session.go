package demiurge

import "context"

// SessionRequest says which session an interaction runs in: a fresh one
// (New), a named one (SessionID), or the one bound to the conversation
// (Channel, ConversationKey).
type SessionRequest struct {
	CoreID       string
	CoreRevision string
	// Channel and ConversationKey name the external conversation; both or
	// neither. With neither, no binding is read or written.
	Channel         string
	ConversationKey string
	// SessionID resumes that session (it must exist and be visible to Scope).
	SessionID string
	// New starts a fresh session and moves the conversation to it.
	New bool
	// NewSessionID, with New, is the id the fresh session gets (a
	// delegated child's id is chosen before its task is submitted, since
	// the task's write scope names it). Empty: a generated id.
	NewSessionID string
	// Scope is the principal acting; a created session's immutable owner row
	// is taken from it.
	Scope     PrincipalScope
	Workspace string
	Provider  string
	Model     string
}

// MessageInput is one transcript message to persist.
type MessageInput struct {
	SessionID    string
	TurnID       string
	Role         string // RoleUser, RoleAssistant, RoleSystem or RoleTool
	Text         string
	Kind         string // "message" when empty
	Visible      bool
	ModelVisible bool
	Metadata     map[string]any
	Channel      string
	Source       string
	// IdempotencyKey, when set, makes a repeated append a no-op that
	// returns the first message (a redelivered notice is written once).
	IdempotencyKey string
}

// TurnStart is the identity of a turn about to run: the turn, its session,
// the core revision it is pinned to and the Host that runs it.
type TurnStart struct {
	TurnID       string
	SessionID    string
	CoreID       string
	CoreRevision string
	HostID       string
}

// CommitBatches writes batches in one transaction, each as an Append would,
// all or nothing (the store's AppendBatches, or a store operation that does
// more in the same transaction). The session runtime ends a turn through
// one, so a turn's last events and its terminal event commit together.
type CommitBatches func(ctx context.Context, batches []EventBatch) ([][]Event, error)
