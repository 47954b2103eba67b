package demiurge

import "slices"

// Authorities of a PrincipalScope.
const (
	AuthorityOperator       = "operator"
	AuthorityConversation   = "conversation"
	AuthoritySystem         = "system"
	AuthorityDelegatedAgent = "delegated_agent"
)

// OperatorPrincipalID is the principal of the local operator (the CLI).
const OperatorPrincipalID = "principal:operator:local"

// PrincipalScope says who acts and which sessions they may see. Scopes are
// issued by the Host only; nothing a model or an authored module writes can
// widen one.
type PrincipalScope struct {
	PrincipalID       string
	Authority         string
	Channel           string
	ConversationKey   string
	SessionID         string
	AllowedSessionIDs []string
	OriginSessionID   string
	OriginTurnID      string
}

// OperatorScope returns the scope of the local operator acting in sessionID.
// The operator may see every session that has a durable owner.
func OperatorScope(sessionID string) PrincipalScope {
	s := PrincipalScope{PrincipalID: OperatorPrincipalID, Authority: AuthorityOperator, SessionID: sessionID}
	if sessionID != "" {
		s.AllowedSessionIDs = []string{sessionID}
	}
	return s
}

// Validate checks the invariants of a principal scope.
func (s PrincipalScope) Validate() error {
	if s.PrincipalID == "" {
		return Errorf(EINVALID, "principal scope requires a principal_id")
	}
	if s.SessionID != "" && !s.Allows(s.SessionID) && s.Authority != AuthorityOperator {
		return Errorf(EINVALID, "principal scope allowed_session_ids must contain its session_id")
	}
	switch s.Authority {
	case AuthorityOperator:
		if s.PrincipalID != OperatorPrincipalID || s.Channel != "" || s.ConversationKey != "" || s.OriginSessionID != "" {
			return Errorf(EINVALID, "operator scope carries no route facts or lineage")
		}
	case AuthorityConversation:
		if s.Channel == "" || s.ConversationKey == "" {
			return Errorf(EINVALID, "conversation scope requires channel and conversation_key")
		}
	case AuthoritySystem:
		if s.Channel != "" || s.ConversationKey != "" {
			return Errorf(EINVALID, "system scope carries no route facts")
		}
	case AuthorityDelegatedAgent:
		if s.OriginSessionID == "" || s.OriginTurnID == "" {
			return Errorf(EINVALID, "delegated_agent scope requires origin session and turn")
		}
	default:
		return Errorf(EINVALID, "unknown principal authority %q", s.Authority)
	}
	return nil
}

// Allows reports whether the scope lists sessionID among its allowed sessions.
func (s PrincipalScope) Allows(sessionID string) bool {
	return slices.Contains(s.AllowedSessionIDs, sessionID)
}

// Owner returns the durable owner row a session created under this scope gets.
func (s PrincipalScope) Owner() SessionOwner {
	return SessionOwner{
		Kind:            s.Authority,
		PrincipalID:     s.PrincipalID,
		Channel:         s.Channel,
		ConversationKey: s.ConversationKey,
		OriginSessionID: s.OriginSessionID,
		OriginTurnID:    s.OriginTurnID,
	}
}
