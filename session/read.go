package session

import (
	"context"
	"slices"

	"github.com/demiurge/demiurge"
)

// List bounds.
const (
	DefaultListLimit    = 20
	MaxListLimit        = demiurge.MaxSessionLimit
	DefaultHistoryLimit = 200
	MaxHistoryLimit     = demiurge.MaxMessageLimit
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
	return r.st.ListSessions(ctx, demiurge.SessionFilter{CoreID: coreID, Scope: &scope, Limit: limit})
}

// History returns the transcript context assembly replays: messages of kind
// "message" that are model-visible, with a role in {user, assistant, system,
// tool}, after the compaction cutoff (Session.CompactedUntilSeq: the cutoff
// message and everything before it are left to the compaction summary); the
// newest limit of them (≤ 0 means DefaultHistoryLimit, capped at
// MaxHistoryLimit) in chronological order. It reads only that window, never
// the whole transcript.
func (r *Runtime) History(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error) {
	s, err := r.session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	limit = min(limit, MaxHistoryLimit)
	filter := demiurge.MessageFilter{
		Limit:            limit,
		AfterSeq:         s.CompactedUntilSeq,
		ModelVisibleOnly: true,
		Kind:             "message",
		Roles:            historyRoles,
	}
	w, ok := r.history.get(s, limit)
	if ok {
		filter.AfterSeq = max(filter.AfterSeq, w.lastSeq)
	} else {
		w = historyWindow{limit: limit, cutoff: s.CompactedUntilSeq, edits: s.MessageEdits, lastSeq: s.CompactedUntilSeq}
	}
	fresh, err := r.st.RecentMessages(ctx, sessionID, filter)
	if err != nil {
		return nil, err
	}
	w = w.extend(fresh)
	r.history.put(sessionID, w)
	return slices.Clone(w.msgs), nil
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
	return r.st.RecentMessages(ctx, sessionID, demiurge.MessageFilter{Limit: min(limit, MaxHistoryLimit)})
}
