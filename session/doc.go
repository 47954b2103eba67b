// Package session is the SessionRuntime: sessions, conversation bindings,
// immutable owners, transcript messages, bounded history windows and turn
// lifecycle records (spec host-runtime §3, with the principal scopes of
// §2.4; DESIGN §3).
//
// # Usage
//
// The composition root builds one Runtime over the store:
//
//	rt := session.NewRuntime(db, session.Options{})
//	conv := session.CLIConversationKey(coreID)
//	s, created, err := rt.Resolve(ctx, demiurge.SessionRequest{
//		CoreID: coreID, Channel: conv.Channel, ConversationKey: conv.Key,
//		Scope: demiurge.OperatorScope(""),
//	})
//
// Resolve picks the session of an interaction: a fresh one (New), an explicit
// one (SessionID, looked up under the caller's scope), the one bound to the
// conversation (core, channel, key), or a new one bound to it. A session's
// owner row is written once, from the scope that created it, and never
// changes. Owned reads (Get, List) give the identical ENOTFOUND
// "session not found: <id>" for a session that is missing and for one that
// belongs to someone else.
//
// History returns the window context assembly replays: the newest messages
// (default 200) of kind "message", model-visible, with a replayable role,
// after the session's compaction cutoff (Session.CompactedUntilSeq, which
// the store fixes when session.updated sets compacted_until_message_id), in
// chronological order; it reads only that window, however long the
// transcript.
//
// FinishTurn gives a turn exactly one terminal event: every terminal append
// uses the idempotency key TerminalKey(turnID).
//
// Conversation keys (ConversationKey) and principal scopes
// (ConversationScope, SchedulerScope, DelegatedAgentScope, ForSession) are
// pure builders with the exact validation messages of the spec.
//
// # Concurrency
//
// A Runtime holds no mutable state; it is safe for concurrent use, and several
// Runtimes in one or several processes may share a database. Races between
// creators of the same conversation are settled by the store's first-wins
// binding: the loser is recorded with session.binding_conflict and every
// caller gets the winner.
//
// # Failure modes
//
// Errors are *demiurge.Error: EINVALID for bad requests and scopes, ENOTFOUND
// for missing or foreign sessions and missing turns, ECONFLICT for a turn that
// already ended differently, and the store's codes (EUNAVAILABLE, ECANCELED,
// ETIMEOUT, EINTERNAL) otherwise. A failed append writes nothing: every write
// is one store batch.
//
// This package imports only the root vocabulary: it reaches the
// RuntimeStore through its Store interface and the root's query windows
// (demiurge.SessionFilter, demiurge.MessageFilter). It is imported by the
// turn engine and the composition root.
package session
