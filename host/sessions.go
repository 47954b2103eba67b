package host

import (
	"context"

	"github.com/demiurge/demiurge"
)

// The operator's reads of sessions and turns. The operator sees every
// session of the home, so each read runs in the operator scope.

// Home is the runtime home this Host runs over.
func (h *Host) Home() Home { return h.home }

// DefaultCore is the core a request that names none runs
// (config.yaml runtime.default_core).
func (h *Host) DefaultCore() string { return h.config.Runtime.DefaultCore }

// ListSessions lists the newest sessions of a core, limit of them.
func (h *Host) ListSessions(ctx context.Context, coreID string, limit int) ([]demiurge.Session, error) {
	return h.sessions.List(ctx, demiurge.OperatorScope(""), coreID, limit)
}

// Session reads one session; an unknown id is ENOTFOUND.
func (h *Host) Session(ctx context.Context, id string) (demiurge.Session, error) {
	return h.sessions.Get(ctx, demiurge.OperatorScope(""), id)
}

// Transcript reads the newest limit messages of a session, oldest first.
func (h *Host) Transcript(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error) {
	return h.sessions.Transcript(ctx, sessionID, limit)
}

// ListTurns lists the newest turns (limit per session) of one session, or,
// when sessionID is "", of the newest hundred sessions of coreID, session
// by session.
func (h *Host) ListTurns(ctx context.Context, coreID, sessionID string, limit int) ([]demiurge.Turn, error) {
	ids := []string{sessionID}
	if sessionID == "" {
		list, err := h.ListSessions(ctx, coreID, 100)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, s := range list {
			ids = append(ids, s.ID)
		}
	} else if _, err := h.Session(ctx, sessionID); err != nil {
		return nil, err
	}
	var out []demiurge.Turn
	for _, id := range ids {
		turns, err := h.store.ListTurns(ctx, id, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, turns...)
	}
	return out, nil
}

// CancelTurn cancels a running turn of this Host on behalf of scope: the
// operator may cancel any turn, other principals only turns of a session
// they own. It returns "cancelled", or "not_found" for a turn that is not
// running here or not the scope's.
func (h *Host) CancelTurn(turnID string, scope demiurge.PrincipalScope) string {
	return h.turns.Cancel(turnID, scope)
}
