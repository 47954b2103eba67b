package session

import (
	"slices"
	"sync"

	"github.com/demiurge/demiurge"
)

// maxCachedHistories bounds how many sessions keep a history window.
const maxCachedHistories = 256

// historyCache keeps the last history window read per session, so the next
// turn reads only the messages persisted since (by sequence) instead of
// decoding the whole window again. A window is reused while the session's
// count of message edits is unchanged and its compaction cutoff has not
// moved back. A cutoff that moved forward drops the messages at or before
// it: the newest limit messages after the new cutoff are exactly those of
// the newest limit after the old one that lie past it (any message newer
// than one of them is after both cutoffs), so nothing needs reading again.
// Otherwise the window is read afresh. Appends by other Host processes are
// found by sequence like our own. Safe for concurrent use.
type historyCache struct {
	mu      sync.Mutex // guards windows
	windows map[string]historyWindow
}

type historyWindow struct {
	limit   int
	cutoff  int64 // Session.CompactedUntilSeq when read
	edits   int64 // Session.MessageEdits when read
	lastSeq int64 // newest sequence the window has seen
	msgs    []demiurge.Message
}

// get returns the window of s when it is still valid for limit.
func (c *historyCache) get(s demiurge.Session, limit int) (historyWindow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.windows[s.ID]
	if !ok || w.limit != limit || w.cutoff > s.CompactedUntilSeq || w.edits != s.MessageEdits {
		return historyWindow{}, false
	}
	if w.cutoff < s.CompactedUntilSeq {
		cut := s.CompactedUntilSeq
		w.msgs = slices.DeleteFunc(slices.Clone(w.msgs), func(m demiurge.Message) bool { return m.Seq <= cut })
		w.cutoff, w.lastSeq = cut, max(w.lastSeq, cut)
	}
	return w, true
}

func (c *historyCache) put(sessionID string, w historyWindow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.windows == nil {
		c.windows = map[string]historyWindow{}
	}
	if _, ok := c.windows[sessionID]; !ok && len(c.windows) >= maxCachedHistories {
		for id := range c.windows { // evict one; any will do
			delete(c.windows, id)
			break
		}
	}
	c.windows[sessionID] = w
}

// extend returns w's messages followed by fresh ones (a message persisted
// again replaces its older copy), cut to the newest limit.
func (w historyWindow) extend(fresh []demiurge.Message) historyWindow {
	msgs := slices.Clone(w.msgs)
	if len(fresh) > 0 {
		ids := make(map[string]bool, len(fresh))
		for _, m := range fresh {
			ids[m.ID] = true
		}
		msgs = slices.DeleteFunc(msgs, func(m demiurge.Message) bool { return ids[m.ID] })
		msgs = append(msgs, fresh...)
		w.lastSeq = fresh[len(fresh)-1].Seq
	}
	if len(msgs) > w.limit {
		msgs = msgs[len(msgs)-w.limit:]
	}
	w.msgs = msgs
	return w
}
