package session

import (
	"strings"

	"github.com/demiurge/demiurge"
)

// Principal scope builders. Each returns a scope that
// passes demiurge.PrincipalScope.Validate; a sessionID of "" leaves the scope
// unbound (the session is not known before Resolve), and ForSession binds it
// afterwards. Components are required: an empty one is EINVALID, never a
// principal id with a hole in it.

// ConversationScope returns the scope of an external conversation: principal
// `principal:conversation:<channel>:<enc principal_key>`.
func ConversationScope(channel, principalKey, conversationKey, sessionID string) (demiurge.PrincipalScope, error) {
	if !isIdentifier(channel) {
		return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "conversation scope channel must be a lowercase identifier")
	}
	if principalKey == "" {
		return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "external interaction principal_key is required")
	}
	if conversationKey == "" {
		return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "conversation scope requires a conversation_key")
	}
	s := demiurge.PrincipalScope{
		PrincipalID:     "principal:conversation:" + channel + ":" + demiurge.PercentEncode(principalKey),
		Authority:       demiurge.AuthorityConversation,
		Channel:         channel,
		ConversationKey: conversationKey,
	}
	return ForSession(s, sessionID), nil
}

// SchedulerScope returns the system scope of one scheduled run: principal
// `principal:scheduler:<core>:<schedule>:<run_id>`. It carries no route facts.
func SchedulerScope(coreID, scheduleID, runID, sessionID string) (demiurge.PrincipalScope, error) {
	for _, f := range []struct{ name, v string }{{"core_id", coreID}, {"schedule_id", scheduleID}, {"run_id", runID}} {
		if f.v == "" {
			return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "scheduler scope requires a %s", f.name)
		}
	}
	s := demiurge.PrincipalScope{
		PrincipalID: "principal:scheduler:" + coreID + ":" + scheduleID + ":" + runID,
		Authority:   demiurge.AuthoritySystem,
	}
	return ForSession(s, sessionID), nil
}

// DelegatedAgentScope returns the scope of a child agent spawned by task
// taskID from a turn of parent's session: principal
// `principal:delegated_agent:<enc parent principal>:<task_id>`, origin session
// parent.SessionID, origin turn originTurnID. The child never inherits the
// parent's allowed sessions or route.
func DelegatedAgentScope(parent demiurge.PrincipalScope, originTurnID, taskID, childSessionID string) (demiurge.PrincipalScope, error) {
	switch {
	case parent.PrincipalID == "":
		return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "delegated_agent scope requires a parent principal")
	case parent.SessionID == "" || originTurnID == "":
		return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "delegated_agent scope requires origin session and turn")
	case taskID == "":
		return demiurge.PrincipalScope{}, demiurge.Errorf(demiurge.EINVALID, "delegated_agent scope requires a task_id")
	}
	s := demiurge.PrincipalScope{
		PrincipalID:     "principal:delegated_agent:" + demiurge.PercentEncode(parent.PrincipalID) + ":" + taskID,
		Authority:       demiurge.AuthorityDelegatedAgent,
		OriginSessionID: parent.SessionID,
		OriginTurnID:    originTurnID,
	}
	return ForSession(s, childSessionID), nil
}

// LegacyLocalPrincipalID is the principal of a session created before owners
// were recorded. Such sessions are visible to no scope until repaired.
func LegacyLocalPrincipalID(sessionID string) string {
	return "principal:legacy_local:" + sessionID
}

// ForSession returns scope bound to sessionID: SessionID set and
// AllowedSessionIDs exactly {sessionID}. An empty sessionID clears both.
func ForSession(scope demiurge.PrincipalScope, sessionID string) demiurge.PrincipalScope {
	scope.SessionID = sessionID
	scope.AllowedSessionIDs = nil
	if sessionID != "" {
		scope.AllowedSessionIDs = []string{sessionID}
	}
	return scope
}

// ownerMatches reports whether the durable owner row of a session names the
// same principal as scope: authority, principal, route and lineage must all
// agree (the admission check). The operator matches every owner except
// legacy_local ones.
func ownerMatches(scope demiurge.PrincipalScope, owner demiurge.SessionOwner) bool {
	if owner.Kind == "" || owner.Kind == demiurge.OwnerLegacyLocal || strings.HasPrefix(owner.PrincipalID, "principal:legacy_local:") {
		return false
	}
	if scope.Authority == demiurge.AuthorityOperator {
		return scope.PrincipalID == demiurge.OperatorPrincipalID
	}
	return owner == scope.Owner()
}
