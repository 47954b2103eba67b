package store

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// maxLookupIDRunes bounds the lookup id copied into an audit event.
const maxLookupIDRunes = 256

// auditTimeout bounds an audit append made on behalf of a read; it runs
// even when the reader's context is already cancelled.
const auditTimeout = 5 * time.Second

const sessionSelect = `SELECT s.session_id, s.core_id, s.status, s.channel, s.target_json, s.title, s.preview,
  s.message_count, s.message_edits, s.created_at, s.updated_at, o.owner_kind, o.principal_id, o.channel, o.conversation_key,
  o.origin_session_id, o.origin_turn_id
  FROM sessions s LEFT JOIN session_owners o ON o.session_id = s.session_id`

// Session returns one session. A missing session fails with ENOTFOUND
// "session not found: <id>". Session applies no owner check; callers acting
// for a principal use SessionOwned.
func (db *DB) Session(ctx context.Context, id string) (demiurge.Session, error) {
	row := db.reader.QueryRowContext(ctx, sessionSelect+` WHERE s.session_id = ?`, id)
	s, err := scanSession(row)
	if isNoRows(err) {
		return demiurge.Session{}, sessionNotFound(id)
	}
	return s, db.codeError(ctx, err)
}

func sessionNotFound(id string) error {
	return demiurge.Errorf(demiurge.ENOTFOUND, "session not found: %s", id)
}

// ListSessions returns sessions newest first (updated_at DESC, rowid DESC).
func (db *DB) ListSessions(ctx context.Context, f demiurge.SessionFilter) ([]demiurge.Session, error) {
	q, args, ok := listSessionsQuery(f)
	if !ok {
		return nil, nil
	}
	return db.querySessions(ctx, q, args...)
}

// querySessions runs q, a sessionSelect, on the read pool.
func (db *DB) querySessions(ctx context.Context, q string, args ...any) ([]demiurge.Session, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, db.codeError(ctx, err)
		}
		out = append(out, s)
	}
	return out, db.codeError(ctx, rows.Err())
}

// listSessionsQuery builds ListSessions' query; ok is false when the scope
// can see nothing.
func listSessionsQuery(f demiurge.SessionFilter) (q string, args []any, ok bool) {
	var where []string
	if f.CoreID != "" {
		where = append(where, "s.core_id = ?")
		args = append(args, f.CoreID)
	}
	if f.Scope != nil {
		pred, pargs, ok := ownerPredicate(*f.Scope, "s.session_id")
		if !ok {
			return "", nil, false
		}
		where = append(where, pred)
		args = append(args, pargs...)
	}
	q = sessionSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?"
	return q, append(args, clampLimit(f.Limit, demiurge.DefaultSessionLimit, demiurge.MaxSessionLimit)), true
}

// isOperator reports whether scope carries operator authority. Both the
// authority and the operator principal must match: anything else is
// treated as an ordinary scope (fail closed).
func isOperator(scope demiurge.PrincipalScope) bool {
	return scope.Authority == demiurge.AuthorityOperator && scope.PrincipalID == demiurge.OperatorPrincipalID
}

// ownerPredicate is the SQL owner predicate of the spec for
// the session id expression col. ok is false when the scope can see nothing.
func ownerPredicate(scope demiurge.PrincipalScope, col string) (pred string, args []any, ok bool) {
	if isOperator(scope) {
		return `EXISTS (SELECT 1 FROM session_owners ow WHERE ow.session_id = ` + col +
			` AND ow.owner_kind != '` + demiurge.OwnerLegacyLocal + `')`, nil, true
	}
	if len(scope.AllowedSessionIDs) == 0 {
		return "", nil, false
	}
	for _, id := range scope.AllowedSessionIDs {
		args = append(args, id)
	}
	return col + ` IN (` + placeholders(len(args)) + `)`, args, true
}

// SessionBinding returns the session bound to (coreID, channel,
// conversationKey); ok is false when there is none.
func (db *DB) SessionBinding(ctx context.Context, coreID, channel, conversationKey string) (string, bool, error) {
	var id string
	err := db.reader.QueryRowContext(ctx, `SELECT session_id FROM session_bindings
  WHERE core_id = ? AND channel = ? AND conversation_key = ?`, coreID, channel, conversationKey).Scan(&id)
	if isNoRows(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, db.codeError(ctx, err)
	}
	return id, true, nil
}

// BoundSession returns the session the conversation (core, channel, key)
// is bound to, in one read; ok is false when there is no binding or it
// names a session that is gone (SessionBinding tells the two apart).
func (db *DB) BoundSession(ctx context.Context, coreID, channel, conversationKey string) (demiurge.Session, bool, error) {
	row := db.reader.QueryRowContext(ctx, sessionSelect+` WHERE s.session_id = (SELECT b.session_id FROM session_bindings b
  WHERE b.core_id = ? AND b.channel = ? AND b.conversation_key = ?)`, coreID, channel, conversationKey)
	s, err := scanSession(row)
	if isNoRows(err) {
		return demiurge.Session{}, false, nil
	}
	if err != nil {
		return demiurge.Session{}, false, db.codeError(ctx, err)
	}
	return s, true, nil
}

// SessionOwned returns session id if scope may see it; the owner predicate
// is part of the query. A session that is missing and one that belongs to
// someone else fail with the same ENOTFOUND "session not found: <id>", and
// every miss appends the audit event principal_scope.owner_lookup_denied
// {reason, lookup_id, principal_id, authority, table}. An audit write that
// fails is logged; the caller still gets the not-found error.
func (db *DB) SessionOwned(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Session, error) {
	pred, args, ok := ownerPredicate(scope, "s.session_id")
	if ok {
		row := db.reader.QueryRowContext(ctx, sessionSelect+` WHERE s.session_id = ? AND `+pred, append([]any{id}, args...)...)
		s, err := scanSession(row)
		if err == nil {
			return s, nil
		}
		if !isNoRows(err) {
			return demiurge.Session{}, db.codeError(ctx, err)
		}
	}
	db.auditOwnerMiss(ctx, scope, "sessions", id)
	return demiurge.Session{}, sessionNotFound(id)
}

// auditOwnerMiss classifies an owned-lookup miss and records it.
func (db *DB) auditOwnerMiss(ctx context.Context, scope demiurge.PrincipalScope, table, id string) {
	reason := demiurge.DeniedNotAuthorized
	var kind ns
	var exists int
	err := db.reader.QueryRowContext(ctx, `SELECT 1, o.owner_kind FROM sessions s
  LEFT JOIN session_owners o ON o.session_id = s.session_id WHERE s.session_id = ?`, id).Scan(&exists, &kind)
	switch {
	case isNoRows(err):
		reason = demiurge.DeniedNotFound
	case err != nil:
		db.log.Warn("runtime store: classify owner lookup miss", "err", err)
	case !kind.Valid:
		reason = demiurge.DeniedMissingOwner
	case kind.String == demiurge.OwnerLegacyLocal:
		reason = demiurge.DeniedLegacyOwner
	}
	aggID := scope.PrincipalID
	if aggID == "" {
		aggID = "anonymous"
	}
	ev := demiurge.NewEvent(demiurge.AggPrincipalScope, aggID, demiurge.PrincipalOwnerLookupDeniedPayload{
		Reason:      reason,
		LookupID:    truncateRunes(id, maxLookupIDRunes),
		PrincipalID: scope.PrincipalID,
		Authority:   scope.Authority,
		Table:       table,
	})
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	if _, err := db.Append(actx, []demiurge.Event{ev}, "", nil); err != nil {
		db.log.Warn("runtime store: append owner lookup audit", "err", err)
	}
}

func scanSession(r scanner) (demiurge.Session, error) {
	var s demiurge.Session
	var channel, title, preview, kind, principal, oChannel, oKey, oSession, oTurn ns
	var target, created, updated string
	if err := r.Scan(&s.ID, &s.CoreID, &s.Status, &channel, &target, &title, &preview, &s.MessageCount, &s.MessageEdits,
		&created, &updated, &kind, &principal, &oChannel, &oKey, &oSession, &oTurn); err != nil {
		return s, err
	}
	s.Channel, s.Title, s.Preview = channel.String, title.String, preview.String
	s.CreatedAt, s.UpdatedAt = demiurge.ParseTime(created), demiurge.ParseTime(updated)
	s.Owner = demiurge.SessionOwner{
		Kind: kind.String, PrincipalID: principal.String, Channel: oChannel.String,
		ConversationKey: oKey.String, OriginSessionID: oSession.String, OriginTurnID: oTurn.String,
	}
	tg := jsonObject(objectOrCorrupt(target))
	s.ConversationKey = tg.str("conversation_key")
	s.Workspace = tg.str("workspace")
	s.Provider = tg.str("provider")
	s.Model = tg.str("model")
	s.CoreRevision = tg.str("core_revision")
	s.Metadata = tg.obj("metadata")
	if s.Metadata == nil && tg.has("_corrupt_json") {
		s.Metadata = map[string]any{"_corrupt_json": tg["_corrupt_json"]}
	}
	switch v := tg["bootstrap_context"].(type) {
	case nil:
	case string:
		s.BootstrapContext = v
	default:
		s.BootstrapContext, _ = marshalJSON(v)
	}
	s.BootstrapInitialized = tg.boolean("bootstrap_context_initialized", false)
	s.CompactionSummaryID = tg.str("compaction_summary_id")
	s.CompactedUntilMessageID = tg.str("compacted_until_message_id")
	if s.CompactedUntilMessageID != "" {
		s.CompactedUntilSeq, _ = tg.num(cutoffSeqKey)
	}
	return s, nil
}
