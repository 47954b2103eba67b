package store

import (
	"github.com/demiurge/demiurge"
)

// targetKeys are the session fields kept in sessions.target_json
// (spec host-runtime §3.1). Events name them at the top level of the
// payload; a payload "target" object may carry further keys.
var targetKeys = []string{
	"conversation_key", "workspace", "provider", "model", "core_revision", "metadata",
	"bootstrap_context", "bootstrap_context_initialized",
	"compaction_summary_id", "compacted_until_message_id", "principal_scope",
}

var (
	sqlSessionCreate = prep(`INSERT INTO sessions
  (session_id, core_id, status, channel, target_json, title, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT(session_id) DO UPDATE SET core_id = excluded.core_id, status = excluded.status,
    channel = excluded.channel, target_json = excluded.target_json,
    title = COALESCE(excluded.title, sessions.title), updated_at = excluded.updated_at`)
	sqlSessionTarget = prep(`SELECT core_id, channel, target_json FROM sessions WHERE session_id = ?`)
	sqlSessionUpdate = prep(`UPDATE sessions SET core_id = COALESCE(?, core_id), status = COALESCE(?, status),
  channel = COALESCE(?, channel), target_json = ?, title = COALESCE(?, title),
  updated_at = CASE WHEN ? THEN ? ELSE updated_at END
  WHERE session_id = ?`)
	sqlBindingInsert = prep(`INSERT OR IGNORE INTO session_bindings
  (core_id, channel, conversation_key, session_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`)
	sqlBindingRepoint = prep(`INSERT INTO session_bindings
  (core_id, channel, conversation_key, session_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT(core_id, channel, conversation_key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at`)
	sqlOwnerInsert = prep(`INSERT OR IGNORE INTO session_owners
  (session_id, owner_kind, principal_id, channel, conversation_key, origin_session_id, origin_turn_id, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	sqlSessionDeleteEmpty = prep(`DELETE FROM sessions WHERE session_id = ?
  AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?)`)
	sqlOwnerDelete          = prep(`DELETE FROM session_owners WHERE session_id = ?`)
	sqlBindingDeleteSession = prep(`DELETE FROM session_bindings WHERE session_id = ?`)
)

func init() {
	register(projectSessionCreated, demiurge.EvSessionCreated)
	register(projectSessionUpdated, demiurge.EvSessionUpdated, demiurge.EvSessionResumed)
	register(projectSessionRebound, demiurge.EvSessionBindingRebound)
	register(projectSessionConflict, demiurge.EvSessionBindingConflict)
}

// cutoffSeqKey is the target key holding the Seq of the session's
// compaction cutoff message. The projection derives it; no event sets it.
const cutoffSeqKey = "compacted_until_seq"

// mergeTarget applies the target fields given in p to target (absent or
// null keys keep the old value: COALESCE semantics). Derived keys in a
// payload are ignored.
func mergeTarget(target map[string]any, p payload) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for _, k := range targetKeys {
		if p.has(k) {
			target[k] = p[k]
		}
	}
	for k, v := range p.obj("target") {
		if v != nil && k != cutoffSeqKey {
			target[k] = v
		}
	}
	return target
}

// sqlMessageSeq reads the Seq of one message of one session.
var sqlMessageSeq = prep(`SELECT runtime_seq FROM messages WHERE message_id = ? AND session_id = ?`)

// setCutoff fixes the Seq of the compaction cutoff when p names
// compacted_until_message_id (at the top level or in its target object):
// the message must be one of the session's, persisted before this event
// (possibly earlier in the same batch). An empty id clears the cutoff.
// It fails with EINVALID for a message the session does not have, so a
// cutoff is never silently dropped.
func (t *wtx) setCutoff(sessionID string, target map[string]any, p payload) error {
	const key = "compacted_until_message_id"
	if !p.has(key) && !payload(p.obj("target")).has(key) {
		return nil
	}
	msgID := payload(target).str(key)
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

func projectSessionCreated(t *wtx, e *demiurge.Event, p payload) error {
	id := e.AggregateID
	coreID := p.str("core_id")
	target := mergeTarget(nil, p)
	if err := t.setCutoff(id, target, p); err != nil {
		return err
	}
	targetJSON, err := marshalJSON(target)
	if err != nil {
		return err
	}
	at := eventTime(e)
	channel := p.str("channel")
	if _, err := t.exec(sqlSessionCreate, id, coreID, p.strOr("status", demiurge.SessionActive),
		nullable(channel), targetJSON, p.nstr("title"), at, at); err != nil {
		return err
	}
	if err := t.bindIfAbsent(coreID, channel, payload(target).str("conversation_key"), id, at); err != nil {
		return err
	}
	return t.insertOwner(id, payload(p.obj("owner")), at)
}

// insertOwner writes the owner row once; later events never change it.
// A session created without an owner is owned by legacy_local.
func (t *wtx) insertOwner(sessionID string, o payload, at string) error {
	kind, principal := o.str("kind"), o.str("principal_id")
	if o == nil {
		kind, principal = demiurge.OwnerLegacyLocal, "principal:legacy_local:"+sessionID
	}
	if kind == "" || principal == "" {
		return demiurge.Errorf(demiurge.EINVALID, "session %s owner requires kind and principal_id", sessionID)
	}
	_, err := t.exec(sqlOwnerInsert, sessionID, kind, principal, nullable(o.str("channel")),
		nullable(o.str("conversation_key")), nullable(o.str("origin_session_id")),
		nullable(o.str("origin_turn_id")), at, at)
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

func projectSessionUpdated(t *wtx, e *demiurge.Event, p payload) error {
	id := e.AggregateID
	coreID, channel, target, ok, err := t.loadTarget(id)
	if err != nil || !ok {
		return err
	}
	target = mergeTarget(target, p)
	if err := t.setCutoff(id, target, p); err != nil {
		return err
	}
	targetJSON, err := marshalJSON(target)
	if err != nil {
		return err
	}
	// session.updated touches updated_at unless told not to; a resume does not.
	touch := p.boolean("touch", e.Type == demiurge.EvSessionUpdated)
	at := eventTime(e)
	if _, err := t.exec(sqlSessionUpdate, p.nstr("core_id"), p.nstr("status"), p.nstr("channel"),
		targetJSON, p.nstr("title"), touch, at, id); err != nil {
		return err
	}
	if c := p.str("core_id"); c != "" {
		coreID = c
	}
	if c := p.str("channel"); c != "" {
		channel = c
	}
	return t.bindIfAbsent(coreID, channel, payload(target).str("conversation_key"), id, at)
}

// projectSessionRebound moves an external conversation to this session.
func projectSessionRebound(t *wtx, e *demiurge.Event, p payload) error {
	id := e.AggregateID
	coreID, _, target, ok, err := t.loadTarget(id)
	if err != nil || !ok {
		return err
	}
	channel, key := p.str("channel"), p.str("conversation_key")
	if channel == "" || key == "" {
		return demiurge.Errorf(demiurge.EINVALID, "session.binding.rebound requires channel and conversation_key")
	}
	if c := p.str("core_id"); c != "" {
		coreID = c
	}
	target = mergeTarget(target, p)
	if err := t.setCutoff(id, target, p); err != nil {
		return err
	}
	targetJSON, err := marshalJSON(target)
	if err != nil {
		return err
	}
	at := eventTime(e)
	if _, err := t.exec(sqlSessionUpdate, p.nstr("core_id"), nil, channel, targetJSON, nil, true, at, id); err != nil {
		return err
	}
	_, err = t.exec(sqlBindingRepoint, coreID, channel, key, id, at, at)
	return err
}

// projectSessionConflict deletes the losing session of a binding race when
// it has no messages, together with its owner row and bindings.
func projectSessionConflict(t *wtx, e *demiurge.Event, p payload) error {
	loser := p.str("loser")
	if loser == "" || loser == p.str("winner") {
		return nil
	}
	res, err := t.exec(sqlSessionDeleteEmpty, loser, loser)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	if _, err := t.exec(sqlOwnerDelete, loser); err != nil {
		return err
	}
	_, err = t.exec(sqlBindingDeleteSession, loser)
	return err
}
