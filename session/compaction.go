package session

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
)

// Compaction is the batch that records a compaction: the summary message
// (message.persisted, role system, kind compaction_summary, hidden, model
// visible) and the session.updated that names it and moves the cutoff to
// UntilMessageID. Written as one batch it is one transaction: a reader
// sees the session before the compaction or after it, never half.
// EINVALID for a missing session id, text or cutoff.
func (r *Runtime) Compaction(in demiurge.CompactionInput) (demiurge.EventBatch, demiurge.Message, error) {
	if in.Text == "" || in.UntilMessageID == "" {
		return demiurge.EventBatch{}, demiurge.Message{}, demiurge.Errorf(demiurge.EINVALID, "compaction of session %s requires a summary and a cutoff message", in.SessionID)
	}
	b, msg, err := r.Message(demiurge.MessageInput{
		SessionID: in.SessionID, TurnID: in.TurnID, Role: demiurge.RoleSystem, Kind: demiurge.KindCompactionSummary,
		Text: in.Text, Visible: false, ModelVisible: true, Metadata: in.Metadata,
	})
	if err != nil {
		return demiurge.EventBatch{}, demiurge.Message{}, err
	}
	// Summaries never change: the next turn's Summary need not read back
	// the one this batch writes. Were the batch never committed, no
	// session would name the id.
	r.summaries.put(msg.ID, msg.Content.Text)
	until := in.UntilMessageID
	touch := false
	b.Events = append(b.Events, r.event(demiurge.AggSession, in.SessionID, demiurge.SessionUpdatedPayload{
		Touch:         &touch,
		SessionTarget: demiurge.SessionTarget{CompactionSummaryID: msg.ID, CompactedUntilMessageID: &until},
	}))
	return b, msg, nil
}

// Lookup reads a session by id, whoever owns it: for the engine, which
// revalidates a session it already holds. ENOTFOUND "session not found".
func (r *Runtime) Lookup(ctx context.Context, id string) (demiurge.Session, error) {
	return r.session(ctx, id)
}

// Summary returns the text of the session's current compaction summary
// ("" when it has none). The summary message is written with the cutoff
// that names it, so it lies after the cutoff: the read walks only the
// messages since. Summaries never change, so each is read once per
// Runtime.
func (r *Runtime) Summary(ctx context.Context, s demiurge.Session) (string, error) {
	if s.CompactionSummaryID == "" {
		return "", nil
	}
	if text, ok := r.summaries.get(s.CompactionSummaryID); ok {
		return text, nil
	}
	msgs, err := r.st.RecentMessages(ctx, s.ID, demiurge.MessageFilter{
		AfterSeq: s.CompactedUntilSeq, Kind: demiurge.KindCompactionSummary, Limit: MaxHistoryLimit,
	})
	if err != nil {
		return "", err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].ID == s.CompactionSummaryID {
			r.summaries.put(msgs[i].ID, msgs[i].Content.Text)
			return msgs[i].Content.Text, nil
		}
	}
	return "", nil
}

// maxCachedSummaries bounds the summaries a Runtime keeps.
const maxCachedSummaries = 256

// summaryCache keeps summary texts by message id. Safe for concurrent use.
type summaryCache struct {
	mu    sync.Mutex // guards texts
	texts map[string]string
}

func (c *summaryCache) get(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.texts[id]
	return t, ok
}

func (c *summaryCache) put(id, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.texts == nil || len(c.texts) >= maxCachedSummaries {
		c.texts = map[string]string{}
	}
	c.texts[id] = text
}
