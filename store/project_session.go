package store

import (
	"cmp"

	"github.com/demiurge/demiurge"
)

var (
	sqlSessionCreate = `INSERT INTO sessions
  (session_id, core_id, status, channel, target_json, title, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT(session_id) DO UPDATE SET core_id = excluded.core_id, status = excluded.status,
    channel = excluded.channel, target_json = excluded.target_json,
    title = COALESCE(excluded.title, sessions.title), updated_at = excluded.updated_at`
	sqlSessionTarget = `SELECT core_id, channel, target_json FROM sessions WHERE session_id = ?`
	sqlSessionUpdate = `UPDATE sessions SET core_id = COALESCE(?, core_id), status = COALESCE(?, status),
  channel = COALESCE(?, channel), target_json = ?, title = COALESCE(?, title),
  updated_at = CASE WHEN ? THEN ? ELSE updated_at END
  WHERE session_id = ?`
	sqlBindingInsert = `INSERT OR IGNORE INTO session_bindings
  (core_id, channel, conversation_key, session_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`
	sqlBindingRepoint = `INSERT INTO session_bindings
  (core_id, channel, conversation_key, session_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT(core_id, channel, conversation_key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at`
	sqlOwnerInsert = `INSERT OR IGNORE INTO session_owners
  (session_id, owner_kind, principal_id, channel, conversation_key, origin_session_id, origin_turn_id, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlSessionDeleteEmpty = `DELETE FROM sessions WHERE session_id = ?
  AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?)`
	sqlOwnerDelete          = `DELETE FROM session_owners WHERE session_id = ?`
	sqlBindingDeleteSession = `DELETE FROM session_bindings WHERE session_id = ?`
)

func init() {
	on(projectSessionCreated)
	on(func(t *wtx, e evMeta, p demiurge.SessionUpdatedPayload) error { return t.updateSession(e, p, true) })
	on(func(t *wtx, e evMeta, p demiurge.SessionResumedPayload) error {
		return t.updateSession(e, demiurge.SessionUpdatedPayload(p), false)
	})
	on(projectSessionRebound)
	on(projectSessionConflict)
}

// Target keys the projection reads back or derives.
const (
	cutoffKey = "compacted_until_message_id"
	// cutoffSeqKey holds the Seq of the session's compaction cutoff
	// message. The projection derives it; no event sets it.
	cutoffSeqKey    = "compacted_until_seq"
	conversationKey = "conversation_key"
)

// mergeTarget applies the target fields given in st to target (absent
// fields keep the old value: COALESCE semantics); the keys of st.Target
// come last and win. Derived keys in st.Target are ignored.
func mergeTarget(target map[string]any, st demiurge.SessionTarget) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, v := range map[string]string{
		conversationKey: st.ConversationKey, "workspace": st.Workspace, "provider": st.Provider,
		"model": st.Model, "core_revision": st.CoreRevision, "bootstrap_context": st.BootstrapContext,
		"compaction_summary_id": st.CompactionSummaryID,
	} {
		if v != "" {
			target[k] = v
		}
	}
	if st.Metadata != nil {
		target["metadata"] = st.Metadata
	}
	if st.PrincipalScope != nil {
		target["principal_scope"] = st.PrincipalScope
	}
	if st.BootstrapInitialized {
		target["bootstrap_context_initialized"] = true
	}
	if st.CompactedUntilMessageID != nil {
		target[cutoffKey] = *st.CompactedUntilMessageID
	}
	for k, v := range st.Target {
		if v != nil && k != cutoffSeqKey {
			target[k] = v
		}
	}
	return target
}

// sqlMessageSeq reads the Seq of one message of one session.
var sqlMessageSeq = `SELECT runtime_seq FROM messages WHERE message_id = ? AND session_id = ?`

// setCutoff fixes the Seq of the compaction cutoff when st names
// compacted_until_message_id (itself or in its target object): the
// message must be one of the session's, persisted before this event
// (possibly earlier in the same batch). An empty id clears the cutoff.
// It fails with EINVALID for a message the session does not have, so a
// cutoff is never silently dropped.
func (t *wtx) setCutoff(sessionID string, target map[string]any, st demiurge.SessionTarget) error {
	if st.CompactedUntilMessageID == nil && st.Target[cutoffKey] == nil {
		return nil
	}
	msgID, _ := target[cutoffKey].(string)
	if msgID == "" {
		delete(target, cutoffSeqKey)
		return nil
	}
	var seq int64
	err := t.queryRow(sqlMessageSeq, msgID, sessionID).Scan(&seq)
	if isNoRows(err) {
		return demiurge.Errorf(demiurge.EINVALID, "session %s: compacted_until_message_id %s is not a message of the session", sessionID, msgID)
	}
	if err != nil {
		return err
	}
	target[cutoffSeqKey] = seq
	return nil
}

// targetJSON merges st into target, fixes the cutoff and encodes the result.
func (t *wtx) targetJSON(sessionID string, target map[string]any, st demiurge.SessionTarget) (map[string]any, string, error) {
	target = mergeTarget(target, st)
	if err := t.setCutoff(sessionID, target, st); err != nil {
		return nil, "", err
	}
	raw, err := marshalJSON(target)
	return target, raw, err
}

func projectSessionCreated(t *wtx, e evMeta, p demiurge.SessionCreatedPayload) error {
	id := e.aggID
	target, targetJSON, err := t.targetJSON(id, nil, p.SessionTarget)
	if err != nil {
		return err
	}
	at := e.stamp()
	if _, err := t.exec(sqlSessionCreate, id, p.CoreID, cmp.Or(p.Status, demiurge.SessionActive),
		nullable(p.Channel), targetJSON, nullable(p.Title), at, at); err != nil {
		return err
	}
	key, _ := target[conversationKey].(string)
	if err := t.bindIfAbsent(p.CoreID, p.Channel, key, id, at); err != nil {
		return err
	}
	return t.insertOwner(id, p.Owner, at)
}

// insertOwner writes the owner row once; later events never change it.
// A session created without an owner is owned by legacy_local.
func (t *wtx) insertOwner(sessionID string, o *demiurge.SessionOwnerPayload, at string) error {
	if o == nil {
		o = &demiurge.SessionOwnerPayload{Kind: demiurge.OwnerLegacyLocal, PrincipalID: "principal:legacy_local:" + sessionID}
	}
	if o.Kind == "" || o.PrincipalID == "" {
		return demiurge.Errorf(demiurge.EINVALID, "session %s owner requires kind and principal_id", sessionID)
	}
	_, err := t.exec(sqlOwnerInsert, sessionID, o.Kind, o.PrincipalID, nullable(o.Channel),
		nullable(o.ConversationKey), nullable(o.OriginSessionID), nullable(o.OriginTurnID), at, at)
	return err
}

// bindIfAbsent binds (core, channel, key) to the session unless a binding
// exists already: the first session to claim a conversation wins.
func (t *wtx) bindIfAbsent(coreID, channel, key, sessionID, at string) error {
	if channel == "" || key == "" {
		return nil
	}
	_, err := t.exec(sqlBindingInsert, coreID, channel, key, sessionID, at, at)
	return err
}

// loadTarget reads a session's core, channel and target; ok is false when
// the session does not exist.
func (t *wtx) loadTarget(id string) (coreID, channel string, target map[string]any, ok bool, err error) {
	var ch ns
	var raw string
	err = t.queryRow(sqlSessionTarget, id).Scan(&coreID, &ch, &raw)
	if err != nil {
		if isNoRows(err) {
			return "", "", nil, false, nil
		}
		return "", "", nil, false, err
	}
	target, derr := decodeObject(raw)
	if derr != nil {
		target = nil // a corrupt target is replaced by the fields of this event
	}
	return coreID, ch.String, target, true, nil
}

// updateSession applies session.updated and session.resumed: the facts
// given replace the stored ones. touchByDefault says whether updated_at
// moves when the payload does not say (an update does, a resume does not).
func (t *wtx) updateSession(e evMeta, p demiurge.SessionUpdatedPayload, touchByDefault bool) error {
	id := e.aggID
	coreID, channel, target, ok, err := t.loadTarget(id)
	if err != nil || !ok {
		return err
	}
	target, targetJSON, err := t.targetJSON(id, target, p.SessionTarget)
	if err != nil {
		return err
	}
	touch := touchByDefault
	if p.Touch != nil {
		touch = *p.Touch
	}
	at := e.stamp()
	if _, err := t.exec(sqlSessionUpdate, nullable(p.CoreID), nullable(p.Status), nullable(p.Channel),
		targetJSON, nullable(p.Title), touch, at, id); err != nil {
		return err
	}
	key, _ := target[conversationKey].(string)
	return t.bindIfAbsent(cmp.Or(p.CoreID, coreID), cmp.Or(p.Channel, channel), key, id, at)
}

// projectSessionRebound moves an external conversation to this session.
func projectSessionRebound(t *wtx, e evMeta, p demiurge.SessionBindingReboundPayload) error {
	id := e.aggID
	coreID, _, target, ok, err := t.loadTarget(id)
	if err != nil || !ok {
		return err
	}
	if p.Channel == "" || p.ConversationKey == "" {
		return demiurge.Errorf(demiurge.EINVALID, "session.binding.rebound requires channel and conversation_key")
	}
	_, targetJSON, err := t.targetJSON(id, target, p.SessionTarget)
	if err != nil {
		return err
	}
	at := e.stamp()
	if _, err := t.exec(sqlSessionUpdate, nullable(p.CoreID), nil, p.Channel, targetJSON, nil, true, at, id); err != nil {
		return err
	}
	_, err = t.exec(sqlBindingRepoint, cmp.Or(p.CoreID, coreID), p.Channel, p.ConversationKey, id, at, at)
	return err
}

// projectSessionConflict deletes the losing session of a binding race when
// it has no messages, together with its owner row and bindings.
func projectSessionConflict(t *wtx, _ evMeta, p demiurge.SessionBindingConflictPayload) error {
	if p.Loser == "" || p.Loser == p.Winner {
		return nil
	}
	res, err := t.exec(sqlSessionDeleteEmpty, p.Loser, p.Loser)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	if _, err := t.exec(sqlOwnerDelete, p.Loser); err != nil {
		return err
	}
	_, err = t.exec(sqlBindingDeleteSession, p.Loser)
	return err
}
