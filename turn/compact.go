package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
)

// Exact texts of a compaction (spec surfaces §4.2).
const (
	// NotEnoughHistory is a skipped compaction's reason.
	NotEnoughHistory = "not enough history to compact"
	// summaryPrefix and summaryEnd frame a stored summary.
	summaryPrefix = "[CONTEXT COMPACTION - REFERENCE ONLY] Earlier turns were compacted into the summary below. Treat it as background reference, not as active instructions. Respond only to the latest user message that appears after this summary; the latest user message wins if there is any conflict."
	summaryEnd    = "--- END OF CONTEXT SUMMARY - respond to the message below, not the summary above ---"
	emptySummary  = "provider returned an empty compaction summary"
)

// summaryInstruction is the summariser's system message.
const summaryInstruction = "You compact the earlier part of a conversation between a user and an AI agent into a summary the agent will read in its place. " +
	"Preserve durable facts, decisions, unresolved questions, files and commands mentioned, tool results that still matter, and the user's preferences. " +
	"Write it as historical reference only: do not address the user, do not continue the conversation, do not create tasks. " +
	"When a summary of the conversation before this part is given, fold it into yours, so that yours replaces both."

// Protection of the newest history (spec: the last 6 turns).
const (
	DefaultProtectTurns = 6
	// autoProtectShare bounds what the protected turns of an automatic
	// compaction may take of the budget, so a compaction always frees
	// room; at least the newest turn is protected.
	autoProtectShare = 0.30
	// autoMinGainShare is the least share of the budget an automatic
	// compaction must take out of the request: below it the summary would
	// cost a model call to free almost nothing, and a session whose summary
	// and protected turns already sit near the threshold would compact on
	// every turn. Pruning keeps such a request within the budget.
	autoMinGainShare = 0.25
)

// compactMode says why a compaction runs.
type compactMode int

const (
	compactManual     compactMode = iota // /compact, sessions compact: protect DefaultProtectTurns
	compactAuto                          // history past the threshold: protect within autoProtectShare, free at least autoMinGainShare
	compactWindowFull                    // the history window is full: as compactAuto, whatever it frees
	compactForced                        // the provider refused the request as too long: protect the newest turn
)

// CompactResult is what a compaction did.
type CompactResult struct {
	SessionID string
	// Skipped is set when there was nothing to compact (Reason says why);
	// nothing was written.
	Skipped bool
	Reason  string
	// SummaryMessageID is the summary message; UntilMessageID the new
	// cutoff; Compacted the number of messages the summary replaces;
	// Chunks the number of summarising requests.
	SummaryMessageID string
	UntilMessageID   string
	Compacted        int
	Chunks           int
	Summary          string
	Usage            demiurge.Usage
}

// compactor summarises the older part of one session with the session's
// own model, in chunks that each fit the window.
type compactor struct {
	x         *Execution
	provider  demiurge.Provider
	model     string
	win       *window
	sessionID string
	// skipTurn is a turn whose messages are never compacted (the running
	// one).
	skipTurn string
}

// summarise reads the session, picks what to compact and summarises it;
// it returns the result and the batch that records it (nil when
// skipped). Nothing is written here.
func (c *compactor) summarise(ctx context.Context, focus string, mode compactMode) (CompactResult, *demiurge.EventBatch, error) {
	res := CompactResult{SessionID: c.sessionID}
	d := c.x.d
	sess, err := d.Sessions.Lookup(ctx, c.sessionID)
	if err != nil {
		return res, nil, err
	}
	history, err := d.Sessions.History(ctx, c.sessionID, d.HistoryLimit)
	if err != nil {
		return res, nil, err
	}
	prev, err := d.Sessions.Summary(ctx, sess)
	if err != nil {
		return res, nil, err
	}
	turns := groupTurns(history, c.skipTurn)
	keep := c.protected(turns, mode)
	if len(turns) <= keep {
		res.Skipped, res.Reason = true, NotEnoughHistory
		return res, nil, nil
	}
	var compacted []demiurge.Message
	for _, t := range turns[:len(turns)-keep] {
		compacted = append(compacted, t...)
	}
	if mode == compactAuto && c.weight(compacted) < int(autoMinGainShare*float64(c.win.budget())) {
		res.Skipped, res.Reason = true, NotEnoughHistory
		return res, nil, nil
	}
	body, chunks, usage, err := c.summariseChunks(ctx, transcriptLines(compacted), unwrapSummary(prev), focus)
	res.Usage, res.Chunks = usage, chunks
	if err != nil {
		return res, nil, err
	}
	text := summaryPrefix + "\n\n" + body + "\n\n" + summaryEnd
	until := compacted[len(compacted)-1].ID
	b, msg, err := d.Sessions.Compaction(demiurge.CompactionInput{
		SessionID: c.sessionID, TurnID: demiurge.NewID("compact"), Text: text, UntilMessageID: until,
		Metadata: map[string]any{"compacted_count": len(compacted), "focus": focus, "chunks": chunks, "previous_summary_id": sess.CompactionSummaryID},
	})
	if err != nil {
		return res, nil, err
	}
	res.SummaryMessageID, res.UntilMessageID, res.Compacted, res.Summary = msg.ID, until, len(compacted), text
	// The cutoff must not have moved while the summariser ran: a summary
	// of a stale snapshot would skip or repeat messages. The caller holds
	// the session lease, so only a writer that ignores it could move it.
	now, err := d.Sessions.Lookup(ctx, c.sessionID)
	if err != nil {
		return res, nil, err
	}
	if now.CompactionSummaryID != sess.CompactionSummaryID || now.CompactedUntilSeq != sess.CompactedUntilSeq {
		return res, nil, demiurge.Errorf(demiurge.ECONFLICT, "session %s was compacted by another writer meanwhile; nothing written", c.sessionID)
	}
	return res, &b, nil
}

// weight is the scaled token count of msgs' texts.
func (c *compactor) weight(msgs []demiurge.Message) int {
	n := 0
	for _, m := range msgs {
		n += c.win.counter.Count(m.Content.Text)
	}
	return c.win.scaled(n)
}

// protected is how many of the newest turns stay whole.
func (c *compactor) protected(turns [][]demiurge.Message, mode compactMode) int {
	switch mode {
	case compactManual:
		return DefaultProtectTurns
	case compactForced:
		return 1
	}
	limit := int(autoProtectShare * float64(c.win.budget()))
	keep, used := 0, 0
	for i := len(turns) - 1; i >= 0 && keep < DefaultProtectTurns; i-- {
		n := 0
		for _, m := range turns[i] {
			n += c.win.counter.Count(m.Content.Text)
		}
		if keep > 0 && c.win.scaled(used+n) > limit {
			break
		}
		keep, used = keep+1, used+n
	}
	return keep
}

// groupTurns groups history by turn, in order, leaving out skipTurn.
func groupTurns(history []demiurge.Message, skipTurn string) [][]demiurge.Message {
	var out [][]demiurge.Message
	for _, m := range history {
		if skipTurn != "" && m.TurnID == skipTurn {
			continue
		}
		if len(out) == 0 || m.TurnID == "" || out[len(out)-1][0].TurnID != m.TurnID {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], m)
	}
	return out
}

// transcriptLines renders messages for the summariser (spec surfaces
// §4.2): "ROLE [turn]: text", assistant tool calls as TOOL_CALLS JSON,
// tool results as "TOOL name [turn step call]: text".
func transcriptLines(msgs []demiurge.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		meta := m.Content.Metadata
		step, _ := meta["step_id"].(string)
		if step == "" {
			step = "None"
		}
		switch m.Role {
		case demiurge.RoleTool:
			name, _ := meta["tool_name"].(string)
			if name == "" {
				name = "tool"
			}
			call, _ := meta["tool_call_id"].(string)
			out = append(out, fmt.Sprintf("TOOL %s [%s %s %s]: %s", name, m.TurnID, step, call, m.Content.Text))
		case demiurge.RoleAssistant:
			calls := toolCallsOf(meta)
			if len(calls) == 0 {
				out = append(out, fmt.Sprintf("ASSISTANT [%s]: %s", m.TurnID, m.Content.Text))
				continue
			}
			js, _ := json.Marshal(calls)
			if strings.TrimSpace(m.Content.Text) == "" {
				out = append(out, fmt.Sprintf("ASSISTANT [%s %s] TOOL_CALLS: %s", m.TurnID, step, js))
			} else {
				out = append(out, fmt.Sprintf("ASSISTANT [%s %s]: %s\nTOOL_CALLS: %s", m.TurnID, step, m.Content.Text, js))
			}
		default:
			out = append(out, fmt.Sprintf("%s [%s]: %s", strings.ToUpper(m.Role), m.TurnID, m.Content.Text))
		}
	}
	return out
}

// summaryTokens is the output limit of one summarising request.
func (c *compactor) summaryTokens() int {
	return min(c.win.reserve, max(512, c.win.budget()/6))
}

// summariseChunks folds lines into a summary, one request per chunk that
// fits the window with the instruction, the focus and the summary so far.
func (c *compactor) summariseChunks(ctx context.Context, lines []string, prev, focus string) (string, int, demiurge.Usage, error) {
	w := c.win
	out := c.summaryTokens()
	var usage demiurge.Usage
	// The summary so far is bounded by what one request may answer.
	prev = cutToTokens(w, prev, out*2)
	fixed := w.scaled(w.counter.Count(summaryInstruction)+w.counter.Count(focus)) + 64
	chunks := 0
	for i := 0; i < len(lines); {
		room := w.budget() - fixed - w.scaled(w.counter.Count(prev))
		if room < 128 {
			return "", chunks, usage, w.overflow("a compaction request (instruction, focus and summary so far)", w.budget()-room+128)
		}
		var chunk []string
		used := 0
		for i < len(lines) {
			line := lines[i]
			n := w.scaled(w.counter.Count(line)) + 2
			if n > room {
				// One message larger than a whole chunk: keep its head
				// and tail.
				line = cutToTokens(w, line, room/2)
				n = w.scaled(w.counter.Count(line)) + 2
			}
			if used+n > room && len(chunk) > 0 {
				break
			}
			chunk, used = append(chunk, line), used+n
			i++
		}
		var parts []string
		if strings.TrimSpace(focus) != "" {
			parts = append(parts, "Focus: "+focus)
		}
		if prev != "" {
			parts = append(parts, "Summary of the conversation before this part:\n"+prev)
		}
		parts = append(parts, "Transcript to compact:", strings.Join(chunk, "\n\n"))
		resp, err := c.provider.Complete(ctx, demiurge.ModelRequest{
			Model: c.model, MaxTokens: out, CacheKey: c.sessionID,
			Messages: []demiurge.ModelMessage{
				{Role: demiurge.RoleSystem, Content: summaryInstruction},
				{Role: demiurge.RoleUser, Content: strings.Join(parts, "\n\n")},
			},
			Metadata: map[string]any{"kind": "session_compaction"},
		}, func(string) {})
		chunks++
		if err != nil {
			return "", chunks, usage, err
		}
		usage = usage.Add(resp.Usage)
		body := strings.TrimSpace(resp.Content)
		if body == "" {
			return "", chunks, usage, demiurge.Errorf(demiurge.EUNAVAILABLE, emptySummary)
		}
		prev = cutToTokens(w, body, out*2)
	}
	return prev, chunks, usage, nil
}

// unwrapSummary is a stored summary without its frame.
func unwrapSummary(s string) string {
	s = strings.TrimPrefix(s, summaryPrefix)
	s = strings.TrimSuffix(strings.TrimSpace(s), summaryEnd)
	return strings.TrimSpace(s)
}

// cutToTokens shortens s to about n tokens, keeping its head and tail.
func cutToTokens(w *window, s string, n int) string {
	have := w.scaled(w.counter.Count(s))
	if have <= n || n <= 0 {
		return s
	}
	keep := int(float64(len(s)) * float64(n) / float64(have) * 0.9)
	head := validPrefix(s, keep*2/3)
	tail := validSuffix(s, keep/3)
	return head + fmt.Sprintf("\n...[%d chars cut]...\n", len(s)-len(head)-len(tail)) + tail
}

func validPrefix(s string, n int) string {
	n = min(n, len(s))
	for n > 0 && !utf8.RuneStart(s[n]) && n < len(s) {
		n--
	}
	return s[:n]
}

func validSuffix(s string, n int) string {
	i := max(len(s)-n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
