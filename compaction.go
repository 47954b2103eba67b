package demiurge

// KindCompactionSummary is the message kind of a compaction summary: a
// system message, hidden from the transcript's readers, that context
// assembly replays in place of everything up to the session's cutoff.
const KindCompactionSummary = "compaction_summary"

// CompactionInput is one compaction's durable record: the summary text and
// the last message it replaces.
type CompactionInput struct {
	SessionID string
	// TurnID is the compaction's id ("compact_…"): the summary message's
	// turn.
	TurnID string
	Text   string
	// UntilMessageID is the newest message the summary covers; context
	// history starts after it.
	UntilMessageID string
	// Metadata is kept on the summary message (compacted_count, focus, ...).
	Metadata map[string]any
}
