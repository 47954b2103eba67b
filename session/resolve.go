package session

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// auditTimeout bounds the audit append of a refused owned lookup.
const auditTimeout = 5 * time.Second

// Resolve returns the session an interaction runs in and reports whether it
// was created:
//
//   - New: a fresh session; the conversation (if any) is rebound to it.
//   - SessionID: that session, looked up under Scope (missing and foreign give
//     the identical ENOTFOUND "session not found: <id>"); the conversation
//     (if any) is rebound to it.
//   - otherwise the session bound to (core, channel, key), resumed; or a new
//     one, bound to the conversation. When a concurrent creator won the
//     binding, the loser is recorded as a binding conflict (its empty row is
//     deleted) and the winner is returned.
//
// Non-empty Workspace, Provider, Model and CoreRevision are recorded on a
// resumed session without touching its updated_at. Errors: EINVALID for a bad
// request or scope, ENOTFOUND as above, store errors otherwise.
func (r *Runtime) Resolve(ctx context.Context, req demiurge.SessionRequest) (demiurge.Session, bool, error) {
	if err := validateResolve(req); err != nil {
		return demiurge.Session{}, false, err
	}
	switch {
	case req.New:
		return r.create(ctx, req, true)
	case req.SessionID != "":
		s, err := r.owned(ctx, req.Scope, req.SessionID)
		if err != nil {
			return demiurge.Session{}, false, err
		}
		if s.CoreID != req.CoreID {
			return demiurge.Session{}, false, demiurge.Errorf(demiurge.EINVALID, "session %s belongs to core %s, not %s", s.ID, s.CoreID, req.CoreID)
		}
		return r.resume(ctx, s, req, true)
	}
	if req.ConversationKey != "" {
		s, ok, err := r.st.BoundSession(ctx, req.CoreID, req.Channel, req.ConversationKey)
		if err != nil {
			return demiurge.Session{}, false, err
		}
		if ok {
			return r.resume(ctx, s, req, false)
		}
		// No session was bound a moment ago: the binding is missing, names
		// a row that is gone, or was made since by a concurrent creator.
		id, ok, err := r.st.SessionBinding(ctx, req.CoreID, req.Channel, req.ConversationKey)
		if err != nil {
			return demiurge.Session{}, false, err
		}
		if ok {
			s, err := r.st.Session(ctx, id)
			switch {
			case err == nil:
				return r.resume(ctx, s, req, false)
			case demiurge.ErrorCode(err) != demiurge.ENOTFOUND:
				return demiurge.Session{}, false, err
			}
			// A binding to a row that is gone (a deleted conflict loser)
			// is re-pointed at the session created below.
			return r.create(ctx, req, true)
		}
	}
	return r.create(ctx, req, false)
}

func validateResolve(req demiurge.SessionRequest) error {
	if req.CoreID == "" {
		return demiurge.Errorf(demiurge.EINVALID, "session resolve requires a core_id")
	}
	if (req.Channel == "") != (req.ConversationKey == "") {
		return demiurge.Errorf(demiurge.EINVALID, "session resolve requires channel and conversation_key together")
	}
	if req.NewSessionID != "" && (!req.New || !strings.HasPrefix(req.NewSessionID, "session_")) {
		return demiurge.Errorf(demiurge.EINVALID, "session resolve: a chosen session id needs New and the session_ prefix")
	}
	if req.New && req.SessionID != "" {
		return demiurge.Errorf(demiurge.EINVALID, "session resolve takes a new session or a session id, not both")
	}
	if err := req.Scope.Validate(); err != nil {
		return err
	}
	return nil
}

// create appends session.created (owner from the scope) and, when rebind is
// set, session.binding.rebound in the same batch. Without rebind the binding
// is first-wins: if another session holds it afterwards, the new one loses.
func (r *Runtime) create(ctx context.Context, req demiurge.SessionRequest, rebind bool) (demiurge.Session, bool, error) {
	id := req.NewSessionID
	if id == "" {
		id = demiurge.NewID("session")
	}
	created := demiurge.SessionCreatedPayload{CoreID: req.CoreID, Status: demiurge.SessionActive, Channel: req.Channel,
		SessionTarget: target(req), Owner: ownerPayload(req.Scope.Owner())}
	events := []demiurge.Event{r.event(demiurge.AggSession, id, created)}
	bound := req.ConversationKey != ""
	if bound && rebind {
		events = append(events, r.event(demiurge.AggSession, id, rebindPayload(req)))
	}
	if _, err := r.st.Append(ctx, events, "session:"+id+":created", nil); err != nil {
		return demiurge.Session{}, false, err
	}
	if bound && !rebind {
		winner, ok, err := r.st.SessionBinding(ctx, req.CoreID, req.Channel, req.ConversationKey)
		if err != nil {
			return demiurge.Session{}, false, err
		}
		if ok && winner != id {
			conflict := r.event(demiurge.AggSession, id, demiurge.SessionBindingConflictPayload{
				Winner: winner, Loser: id, CoreID: req.CoreID, Channel: req.Channel, ConversationKey: req.ConversationKey,
			})
			if _, err := r.st.Append(ctx, []demiurge.Event{conflict}, "session:"+id+":binding_conflict", nil); err != nil {
				return demiurge.Session{}, false, err
			}
			s, err := r.session(ctx, winner)
			return s, false, err
		}
	}
	s, err := r.session(ctx, id)
	return s, err == nil, err
}

// resume records the request's facts on s: session.binding.rebound when the
// conversation must move to s, else session.resumed (touch=false).
func (r *Runtime) resume(ctx context.Context, s demiurge.Session, req demiurge.SessionRequest, rebind bool) (demiurge.Session, bool, error) {
	var ev demiurge.Event
	if rebind && req.ConversationKey != "" {
		ev = r.event(demiurge.AggSession, s.ID, rebindPayload(req))
	} else {
		if holds(s, req) {
			// Nothing to record: the session already carries every fact.
			return s, false, nil
		}
		touch := false
		ev = r.event(demiurge.AggSession, s.ID, demiurge.SessionResumedPayload{
			Channel: req.Channel, SessionTarget: target(req), Touch: &touch,
		})
	}
	if _, err := r.st.Append(ctx, []demiurge.Event{ev}, "", nil); err != nil {
		return demiurge.Session{}, false, err
	}
	s, err := r.session(ctx, s.ID)
	return s, false, err
}

// holds reports whether s already carries every non-empty fact of req, so
// that resuming it would change nothing.
func holds(s demiurge.Session, req demiurge.SessionRequest) bool {
	same := func(want, have string) bool { return want == "" || want == have }
	return same(req.CoreRevision, s.CoreRevision) && same(req.Channel, s.Channel) &&
		same(req.ConversationKey, s.ConversationKey) && same(req.Workspace, s.Workspace) &&
		same(req.Provider, s.Provider) && same(req.Model, s.Model)
}

// target carries the session facts of req; the store projects empty ones
// as "unchanged".
func target(req demiurge.SessionRequest) demiurge.SessionTarget {
	return demiurge.SessionTarget{CoreRevision: req.CoreRevision, ConversationKey: req.ConversationKey,
		Workspace: req.Workspace, Provider: req.Provider, Model: req.Model}
}

func rebindPayload(req demiurge.SessionRequest) demiurge.SessionBindingReboundPayload {
	return demiurge.SessionBindingReboundPayload{CoreID: req.CoreID, Channel: req.Channel, SessionTarget: target(req)}
}

func ownerPayload(o demiurge.SessionOwner) *demiurge.SessionOwnerPayload {
	return &demiurge.SessionOwnerPayload{Kind: o.Kind, PrincipalID: o.PrincipalID, Channel: o.Channel,
		ConversationKey: o.ConversationKey, OriginSessionID: o.OriginSessionID, OriginTurnID: o.OriginTurnID}
}

// owned returns session id if scope may see it. The operator sees every
// session with a durable owner; another scope sees the sessions it was issued
// for and those whose owner row names the same principal. Everything else is
// the identical ENOTFOUND.
func (r *Runtime) owned(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Session, error) {
	if scope.Authority == demiurge.AuthorityOperator || scope.Allows(id) {
		s, err := r.st.SessionOwned(ctx, scope, id)
		if err != nil {
			if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
				return demiurge.Session{}, sessionNotFound(id, err)
			}
			return demiurge.Session{}, err
		}
		return s, nil
	}
	s, err := r.st.SessionOwned(ctx, ForSession(scope, id), id)
	if err != nil {
		if demiurge.ErrorCode(err) == demiurge.ENOTFOUND {
			return demiurge.Session{}, sessionNotFound(id, err)
		}
		return demiurge.Session{}, err
	}
	if !ownerMatches(scope, s.Owner) {
		r.auditDenied(ctx, scope, id)
		return demiurge.Session{}, sessionNotFound(id, nil)
	}
	return s, nil
}

// auditDenied records an owned lookup refused because the session's owner is
// another principal, as the store does for the misses it sees itself. The
// audit is written even when the caller has given up; its failure is logged
// and the caller still gets not-found.
func (r *Runtime) auditDenied(ctx context.Context, scope demiurge.PrincipalScope, id string) {
	lookup := id
	if len(lookup) > 256 {
		lookup = lookup[:256]
	}
	ev := r.event(demiurge.AggPrincipalScope, scope.PrincipalID, demiurge.PrincipalOwnerLookupDeniedPayload{
		Reason: demiurge.DeniedNotAuthorized, LookupID: lookup, PrincipalID: scope.PrincipalID,
		Authority: scope.Authority, Table: "sessions",
	})
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	if _, err := r.st.Append(actx, []demiurge.Event{ev}, "", nil); err != nil {
		r.log.Warn("session runtime: append owner lookup audit", "err", err)
	}
}
