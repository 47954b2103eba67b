package store

import (
	"github.com/demiurge/demiurge"
)

var (
	sqlInboxInsert = `INSERT INTO channel_inbox (inbound_id, core_id, channel, event_key, conversation_key,
  principal_key, source, reply_to, text, metadata_json, attachments_json, status, attempts, created_at, updated_at, last_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)`
	sqlInboxUpdate = `UPDATE channel_inbox SET status = ?1, claim_id = ?2, host_id = COALESCE(?3, host_id),
  attempts = COALESCE(?4, attempts), turn_id = COALESCE(?5, turn_id), session_id = COALESCE(?6, session_id),
  result = COALESCE(?7, result), last_error = ?8, next_attempt_at = ?9, updated_at = ?10, last_seq = ?11
  WHERE inbound_id = ?12`
)

func init() {
	on(projectInboundAccepted)
	onFamily(projectInboundChange, demiurge.ChannelInboundClaimedPayload{}, demiurge.ChannelInboundStartedPayload{},
		demiurge.ChannelInboundCompletedPayload{}, demiurge.ChannelInboundRetryScheduledPayload{},
		demiurge.ChannelInboundDeadLetteredPayload{})
}

func projectInboundAccepted(t *wtx, e evMeta, p demiurge.ChannelInboundAcceptedPayload) error {
	meta, err := objectJSON(p.Metadata, p.Metadata != nil)
	if err != nil {
		return err
	}
	att, err := optionalJSON(p.Attachments, len(p.Attachments) > 0)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlInboxInsert, e.aggID, p.CoreID, p.Channel, p.EventKey, p.ConversationKey, p.PrincipalKey,
		nullable(p.Source), nullable(p.ReplyTo), p.Text, meta, att, e.stamp(), e.stamp(), e.seq)
	return err
}

// projectInboundChange: the status is the event's; claim_id and last_error
// are replaced, the other fields when given.
func projectInboundChange(t *wtx, e evMeta, p demiurge.ChannelInboundChange) error {
	_, err := t.exec(sqlInboxUpdate, demiurge.InboundStatusOf(e.typ), nullable(p.ClaimID), nullable(p.HostID),
		optionalInt(p.Attempts), nullable(p.TurnID), nullable(p.SessionID), nullable(p.Result), nullable(p.LastError),
		storedTime(p.NextAttemptAt), e.stamp(), e.seq, e.aggID)
	return err
}
