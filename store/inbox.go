package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/demiurge/demiurge"
)

// The ChannelInbox (spec surfaces §3.17): AcceptInbound commits envelopes
// under their dedup keys, ClaimInbounds hands the head of each
// conversation to one Host, and StartInbound, CompleteInbound,
// RetryInbound and DeadLetterInbound move a claimed inbound on, each
// guarded by its claim id. Every change is a channel_inbound.* event
// projected into channel_inbox.

const inboxSelect = `SELECT inbound_id, core_id, channel, event_key, conversation_key, principal_key, source, reply_to,
  text, metadata_json, attachments_json, status, attempts, claim_id, host_id, turn_id, session_id, result, last_error, next_attempt_at,
  created_at, updated_at FROM channel_inbox`

var (
	sqlInboxByID  = inboxSelect + ` WHERE inbound_id = ?`
	sqlInboxHeads = inboxSelect + ` AS i WHERE status IN ('queued', 'retry_scheduled', 'claimed', 'running')
  AND NOT EXISTS (SELECT 1 FROM channel_inbox j WHERE j.core_id = i.core_id AND j.channel = i.channel
    AND j.conversation_key = i.conversation_key AND j.status IN ('queued', 'retry_scheduled', 'claimed', 'running')
    AND j.inbound_id < i.inbound_id)
  ORDER BY inbound_id LIMIT ?`
)

// MaxInboundText bounds the text of one inbound envelope, in bytes.
const MaxInboundText = 256 << 10

func validEnvelope(e demiurge.InboundEnvelope) error {
	switch {
	case e.CoreID == "" || e.Channel == "":
		return demiurge.Errorf(demiurge.EINVALID, "inbound envelope requires a core_id and a channel")
	case e.EventKey == "":
		return demiurge.Errorf(demiurge.EINVALID, "inbound envelope requires the platform's event key")
	case e.ConversationKey == "" || e.PrincipalKey == "":
		return demiurge.Errorf(demiurge.EINVALID, "inbound envelope requires a conversation_key and a principal_key")
	case len(e.Text) > MaxInboundText:
		return demiurge.Errorf(demiurge.EINVALID, "inbound text is larger than %d bytes", MaxInboundText)
	}
	return demiurge.ValidateAttachments(e.Attachments)
}

func inboundKey(e demiurge.InboundEnvelope) string {
	return "inbound:" + e.CoreID + ":" + e.Channel + ":" + e.EventKey
}

// AcceptInbound commits envs (and cursor, when given) in one transaction
// and returns one receipt per envelope: a new inbound, or the inbound the
// same (core, channel, event key) was accepted as before (Duplicate).
// Errors: EINVALID for a bad envelope (nothing is committed), ECONFLICT
// when cursor's host does not hold the channel's lease, store errors.
func (db *DB) AcceptInbound(ctx context.Context, envs []demiurge.InboundEnvelope, cursor *demiurge.ChannelCursor) ([]demiurge.InboxReceipt, error) {
	if err := validEnvelopes(envs); err != nil {
		return nil, err
	}
	var out []demiurge.InboxReceipt
	err := db.writeUrgent(ctx, func(t *wtx) error {
		out = out[:0]
		for _, e := range envs {
			r, err := t.acceptEnvelope(e)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		if cursor != nil {
			res, err := t.exec(sqlChannelCursor, cursor.Cursor, t.nowText(), cursor.CoreID, cursor.Channel, cursor.HostID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return demiurge.Errorf(demiurge.ECONFLICT, "channel %s of core %s: this gateway does not hold its poller lease", cursor.Channel, cursor.CoreID)
			}
		}
		return nil
	})
	return out, err
}

// Inbound returns one inbound; ENOTFOUND "inbound not found: <id>".
func (db *DB) Inbound(ctx context.Context, id string) (demiurge.Inbound, error) {
	in, err := scanInbound(db.reader.QueryRowContext(ctx, sqlInboxByID, id))
	if isNoRows(err) {
		return in, demiurge.Errorf(demiurge.ENOTFOUND, "inbound not found: %s", id)
	}
	return in, db.codeError(ctx, err)
}

// InboundFilter selects inbounds; empty fields match everything.
type InboundFilter struct {
	CoreID, Channel, Status string
	Limit                   int // default 20, at most 500
}

// Inbounds returns the inbounds f selects, newest first.
func (db *DB) Inbounds(ctx context.Context, f InboundFilter) ([]demiurge.Inbound, error) {
	q := inboxSelect + ` WHERE (?1 = '' OR core_id = ?1) AND (?2 = '' OR channel = ?2) AND (?3 = '' OR status = ?3)
  ORDER BY inbound_id DESC LIMIT ?4`
	rows, err := db.reader.QueryContext(ctx, q, f.CoreID, f.Channel, f.Status, clampLimit(f.Limit, 20, 500))
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Inbound
	for rows.Next() {
		in, err := scanInbound(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, db.codeError(ctx, rows.Err())
}

// InboxCounts counts the inbounds of every channel by status.
func (db *DB) InboxCounts(ctx context.Context) ([]demiurge.InboxCount, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT core_id, channel, status, COUNT(*) FROM channel_inbox
  GROUP BY core_id, channel, status ORDER BY core_id, channel, status`)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.InboxCount
	for rows.Next() {
		var c demiurge.InboxCount
		if err := rows.Scan(&c.CoreID, &c.Channel, &c.Status, &c.Count); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, db.codeError(ctx, rows.Err())
}

func scanInbound(r scanner) (demiurge.Inbound, error) {
	var in demiurge.Inbound
	var source, replyTo, att, claim, host, turn, sess, result, lastErr, next ns
	var meta, created, updated string
	if err := r.Scan(&in.ID, &in.CoreID, &in.Channel, &in.EventKey, &in.ConversationKey, &in.PrincipalKey, &source, &replyTo,
		&in.Text, &meta, &att, &in.Status, &in.Attempts, &claim, &host, &turn, &sess, &result, &lastErr, &next, &created, &updated); err != nil {
		return in, err
	}
	in.Source, in.ReplyTo, in.ClaimID, in.HostID = source.String, replyTo.String, claim.String, host.String
	in.TurnID, in.SessionID, in.Result, in.LastError = turn.String, sess.String, result.String, lastErr.String
	in.NextAttemptAt = parseTime(next)
	if m := objectOrCorrupt(meta); len(m) > 0 {
		in.Metadata = m
	}
	if att.String != "" {
		// Unreadable attachments are kept aside, as corrupt metadata is:
		// one bad row must not stop the inbox's claims.
		if err := json.Unmarshal([]byte(att.String), &in.Attachments); err != nil {
			in.Attachments = nil
			if in.Metadata == nil {
				in.Metadata = map[string]any{}
			}
			in.Metadata["_corrupt_attachments_json"] = att.String
		}
	}
	in.CreatedAt, in.UpdatedAt = demiurge.ParseTime(created), demiurge.ParseTime(updated)
	return in, nil
}

// ClaimInbounds claims up to limit (default 1, at most 100) inbounds for
// hostID, oldest first, at most one per conversation: only the oldest
// unfinished inbound of a conversation is ever claimable, so the
// conversation's messages are admitted in order across Host processes. It
// is claimable when queued, retry_scheduled and due, or claimed/running
// by a Host that is gone. A claim records channel_inbound.claimed with a
// new claim id and attempts+1; a reclaimed inbound keeps the turn id
// reserved by the Host that died, so the caller can tell whether that turn
// started. skip names conversations ("core\x00channel\x00key") the caller
// is still busy with.
func (db *DB) ClaimInbounds(ctx context.Context, hostID string, limit int, skip map[string]bool) ([]demiurge.Inbound, error) {
	if hostID == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "claiming inbounds requires a host id")
	}
	limit = clampLimit(limit, 1, 100)
	var out []demiurge.Inbound
	err := db.write(ctx, func(t *wtx) error {
		out = out[:0]
		rows, err := t.query(sqlInboxHeads, 4*limit+len(skip))
		if err != nil {
			return err
		}
		var heads []demiurge.Inbound
		for rows.Next() {
			in, err := scanInbound(rows)
			if err != nil {
				rows.Close()
				return err
			}
			heads = append(heads, in)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		alive := map[string]bool{hostID: true}
		for _, in := range heads {
			if len(out) == limit {
				break
			}
			if skip[ConversationSlot(in.CoreID, in.Channel, in.ConversationKey)] {
				continue
			}
			switch in.Status {
			case demiurge.InboundRetryScheduled:
				if !in.NextAttemptAt.IsZero() && in.NextAttemptAt.After(t.now) {
					continue
				}
			case demiurge.InboundClaimed, demiurge.InboundRunning:
				live, seen := alive[in.HostID]
				if !seen {
					if live, err = t.hostAliveByID(in.HostID); err != nil {
						return err
					}
					alive[in.HostID] = live
				}
				if live {
					continue
				}
			}
			attempts := in.Attempts + 1
			claimID := demiurge.NewID("claim")
			ev := demiurge.NewEvent(demiurge.AggChannelInbound, in.ID, demiurge.ChannelInboundClaimedPayload{
				ClaimID: claimID, HostID: hostID, Attempts: &attempts})
			if _, err := t.append([]demiurge.Event{ev}, "", nil); err != nil {
				return err
			}
			in.Status, in.ClaimID, in.HostID, in.Attempts = demiurge.InboundClaimed, claimID, hostID, attempts
			out = append(out, in)
		}
		return nil
	})
	return out, err
}

// ConversationSlot is the key ClaimInbounds's skip set uses for one
// conversation of one channel of one core.
func ConversationSlot(coreID, channel, conversationKey string) string {
	return coreID + "\x00" + channel + "\x00" + conversationKey
}

// StartInbound reserves turnID for the claimed inbound before its turn
// starts (status running). CompleteInbound ends it (done) with its result
// and the session and turn it ran in; RetryInbound schedules another
// attempt at next with the (redacted) reason; DeadLetterInbound ends it
// for good with the reason. Each is refused with ECONFLICT "stale inbound
// claim" unless claimID is the inbound's current claim and the inbound is
// claimed or running; ENOTFOUND for an unknown inbound.
func (db *DB) StartInbound(ctx context.Context, id, claimID, turnID string) error {
	return db.moveInbound(ctx, id, demiurge.ChannelInboundStartedPayload{ClaimID: claimID, TurnID: turnID})
}

// CompleteInbound: see StartInbound.
func (db *DB) CompleteInbound(ctx context.Context, id, claimID, result, sessionID, turnID string) error {
	return db.moveInbound(ctx, id, demiurge.ChannelInboundCompletedPayload{ClaimID: claimID, Result: result, SessionID: sessionID, TurnID: turnID})
}

// RetryInbound: see StartInbound.
func (db *DB) RetryInbound(ctx context.Context, id, claimID, reason string, next time.Time) error {
	return db.moveInbound(ctx, id, demiurge.ChannelInboundRetryScheduledPayload{ClaimID: claimID, LastError: reason,
		NextAttemptAt: demiurge.FormatTime(next)})
}

// DeadLetterInbound: see StartInbound.
func (db *DB) DeadLetterInbound(ctx context.Context, id, claimID, reason string) error {
	return db.moveInbound(ctx, id, demiurge.ChannelInboundDeadLetteredPayload{ClaimID: claimID, LastError: reason})
}

func (db *DB) moveInbound(ctx context.Context, id string, p demiurge.EventPayload) error {
	var claimID string
	switch c := p.(type) {
	case demiurge.ChannelInboundStartedPayload:
		claimID = c.ClaimID
	case demiurge.ChannelInboundCompletedPayload:
		claimID = c.ClaimID
	case demiurge.ChannelInboundRetryScheduledPayload:
		claimID = c.ClaimID
	case demiurge.ChannelInboundDeadLetteredPayload:
		claimID = c.ClaimID
	}
	return db.write(ctx, func(t *wtx) error {
		in, err := scanInbound(t.queryRow(sqlInboxByID, id))
		if isNoRows(err) {
			return demiurge.Errorf(demiurge.ENOTFOUND, "inbound not found: %s", id)
		}
		if err != nil {
			return err
		}
		if claimID == "" || in.ClaimID != claimID || (in.Status != demiurge.InboundClaimed && in.Status != demiurge.InboundRunning) {
			return demiurge.Errorf(demiurge.ECONFLICT, "stale inbound claim for %s", id)
		}
		_, err = t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggChannelInbound, id, p)}, "", nil)
		return err
	})
}

// CancelQueuedInbounds ends the inbounds of one conversation that wait for
// their turn (queued or retry_scheduled) and were accepted before the
// inbound before (a channel's /stop), as done with result cancelled, and
// returns how many it ended.
func (db *DB) CancelQueuedInbounds(ctx context.Context, coreID, channel, conversationKey, before string) (int, error) {
	n := 0
	// Part of a /stop's accept: urgent like the accept itself.
	err := db.writeUrgent(ctx, func(t *wtx) error {
		n = 0
		rows, err := t.query(`SELECT inbound_id FROM channel_inbox WHERE core_id = ? AND channel = ? AND conversation_key = ?
  AND status IN ('queued', 'retry_scheduled') AND inbound_id < ? ORDER BY inbound_id LIMIT 500`, coreID, channel, conversationKey, before)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			ev := demiurge.NewEvent(demiurge.AggChannelInbound, id, demiurge.ChannelInboundCompletedPayload{
				Result: demiurge.InboundResultCancelled})
			if _, err := t.append([]demiurge.Event{ev}, "", nil); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// AcceptInboundGroups is AcceptInbound for many callers in one write
// transaction, a group commit: next is called once the transaction has
// begun (the writer is this caller's) and returns the callers' envelope
// groups, so every envelope handed in while the writer was busy joins the
// same commit. next is called exactly once per call, whatever the busy
// retries, unless the transaction could not begin (then never).
// receipts[i] and errs[i] answer group i: an invalid envelope (EINVALID)
// fails its own group, nothing of which is committed, never another
// group. The returned error (a store error) fails every group.
func (db *DB) AcceptInboundGroups(ctx context.Context, next func() [][]demiurge.InboundEnvelope) (receipts [][]demiurge.InboxReceipt, errs []error, err error) {
	var groups [][]demiurge.InboundEnvelope
	taken := false
	err = db.writeUrgent(ctx, func(t *wtx) error {
		if !taken {
			groups, taken = next(), true
		}
		receipts, errs = make([][]demiurge.InboxReceipt, len(groups)), make([]error, len(groups))
		for i, envs := range groups {
			if errs[i] = validEnvelopes(envs); errs[i] != nil {
				continue
			}
			for _, e := range envs {
				r, err := t.acceptEnvelope(e)
				if err != nil {
					return err
				}
				receipts[i] = append(receipts[i], r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return receipts, errs, nil
}

func validEnvelopes(envs []demiurge.InboundEnvelope) error {
	for _, e := range envs {
		if err := validEnvelope(e); err != nil {
			return err
		}
	}
	return nil
}

// acceptEnvelope records e as a new inbound, or answers the inbound its
// dedup key was accepted as before.
func (t *wtx) acceptEnvelope(e demiurge.InboundEnvelope) (demiurge.InboxReceipt, error) {
	key := inboundKey(e)
	stored, err := t.eventsByKey(key)
	if err != nil {
		return demiurge.InboxReceipt{}, err
	}
	if len(stored) > 0 {
		return demiurge.InboxReceipt{InboundID: stored[0].AggregateID, Duplicate: true}, nil
	}
	id := demiurge.NewID("inbound")
	ev := demiurge.NewEvent(demiurge.AggChannelInbound, id, demiurge.ChannelInboundAcceptedPayload(e))
	if _, err := t.append([]demiurge.Event{ev}, key, nil); err != nil {
		return demiurge.InboxReceipt{}, err
	}
	t.note(demiurge.TopicInbox)
	return demiurge.InboxReceipt{InboundID: id}, nil
}
