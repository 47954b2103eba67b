package session

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
)

// List bounds.
const (
	DefaultListLimit    = 20
	MaxListLimit        = store.MaxSessionLimit
	DefaultHistoryLimit = 200
	MaxHistoryLimit     = store.MaxMessageLimit
)

// historyRoles are the roles context assembly replays.
var historyRoles = []string{demiurge.RoleUser, demiurge.RoleAssistant, demiurge.RoleSystem, demiurge.RoleTool}

// Get returns session id if scope may see it; missing and foreign sessions
// give the identical ENOTFOUND "session not found: <id>".
func (r *Runtime) Get(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Session, error) {
	if err := scope.Validate(); err != nil {
		return demiurge.Session{}, err
	}
	return r.owned(ctx, scope, id)
}

// List returns up to limit sessions visible to scope, newest first, of
// coreID ("" for every core): for the operator every session with a durable
// owner, for any other scope the sessions it was issued for. limit ≤ 0 means DefaultListLimit; it is capped
// at MaxListLimit.
func (r *Runtime) List(ctx context.Context, scope demiurge.PrincipalScope, coreID string, limit int) ([]demiurge.Session, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	return r.st.ListSessions(ctx, store.SessionFilter{CoreID: coreID, Scope: &scope, Limit: limit})
}

// History returns the transcript context assembly replays: messages of kind
// "message" that are model-visible, with a role in {user, assistant, system,
// tool}, after the compaction cutoff; the newest limit of them (≤ 0 means
// DefaultHistoryLimit, capped at MaxHistoryLimit) in chronological order. It
// reads only that window, never the whole transcript.
func (r *Runtime) History(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error) {
	if _, err := r.session(ctx, sessionID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	limit = min(limit, MaxHistoryLimit)
	return r.st.RecentMessages(ctx, sessionID, store.MessageFilter{
		Limit:            limit,
		ModelVisibleOnly: true,
		Kind:             "message",
		Roles:            historyRoles,
	})
}

// Transcript returns the newest limit messages of a session of every kind
// and visibility (≤ 0 means DefaultHistoryLimit, capped at MaxHistoryLimit),
// in chronological order: the operator's view of a conversation.
func (r *Runtime) Transcript(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error) {
	if _, err := r.session(ctx, sessionID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	return r.st.RecentMessages(ctx, sessionID, store.MessageFilter{Limit: min(limit, MaxHistoryLimit)})
}
