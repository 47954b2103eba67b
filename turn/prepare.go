package turn

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/tokens"
)

// exchange is one turn of replayable history: its messages in their model
// view, the same with every tool result pruned to a stub, and their raw
// token counts. A tool call and its result are always in the same
// exchange, so history is kept or dropped in whole exchanges.
type exchange struct {
	turnID       string
	msgs         []demiurge.ModelMessage
	stubs        []demiurge.ModelMessage // nil: no tool result to prune
	full, pruned int
}

// exchanges replays history (see replay) and groups it by turn, counting
// each message once per counter (cache).
func exchanges(history []demiurge.Message, c tokens.Counter, cache *countCache) []exchange {
	var out []exchange
	open := map[string]bool{}
	for _, m := range history {
		mm, ok := replayOne(m, open)
		if !ok {
			continue
		}
		if len(out) == 0 || m.TurnID == "" || out[len(out)-1].turnID != m.TurnID {
			out = append(out, exchange{turnID: m.TurnID})
		}
		e := &out[len(out)-1]
		n := cachedCount(c, cache, m.ID, mm, false)
		e.msgs = append(e.msgs, mm)
		e.full += n
		if mm.Role == demiurge.RoleTool {
			isErr, _ := m.Content.Metadata["is_error"].(bool)
			stub := mm
			status := "ok"
			if isErr {
				status = "error"
			}
			stub.Content = toolStub(mm.Name, status, mm.Content)
			if e.stubs == nil {
				e.stubs = append([]demiurge.ModelMessage(nil), e.msgs[:len(e.msgs)-1]...)
			}
			e.stubs = append(e.stubs, stub)
			e.pruned += cachedCount(c, cache, m.ID, stub, true)
			continue
		}
		if e.stubs != nil {
			e.stubs = append(e.stubs, mm)
		}
		e.pruned += n
	}
	return out
}

// toolStub is the short stand-in of a pruned tool result: the call's
// name, status ("" when not known) and size, deterministic so that a
// pruned prefix stays byte-stable.
func toolStub(name, status, content string) string {
	if status != "" {
		status += ", "
	}
	return fmt.Sprintf("[tool result pruned to save context: %s, %s%d chars]", name, status, utf8.RuneCountInString(content))
}

func cachedCount(c tokens.Counter, cache *countCache, id string, m demiurge.ModelMessage, stub bool) int {
	if id == "" || cache == nil {
		return countMessage(c, m)
	}
	key := countKey(c, id, len(m.Content), stub)
	if n, ok := cache.get(key); ok {
		return n
	}
	n := countMessage(c, m)
	cache.put(key, n)
	return n
}

func countMessage(c tokens.Counter, m demiurge.ModelMessage) int {
	calls := make([]any, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		calls[i] = tc
	}
	return tokens.Message(c, m.Role, m.Name, m.Content, calls...)
}

func countTools(c tokens.Counter, tools []demiurge.ToolSpec, cache *countCache) int {
	n := 0
	for _, t := range tools {
		n += cache.tool(c, t)
	}
	return n
}

// selection is the history a request carries: the newest exchanges that
// fit, older ones with their tool results pruned first, the oldest
// dropped.
type selection struct {
	msgs    []demiurge.ModelMessage
	tokens  int // raw
	pruned  int // exchanges whose tool results became stubs
	dropped int // exchanges left out
}

// selectHistory fits exs into room raw tokens: everything whole when it
// fits; else tool results are pruned from the oldest exchange on until
// the rest fits; then the oldest exchanges are dropped. The newest
// exchanges are kept whole as long as possible.
func selectHistory(exs []exchange, room int) selection {
	total := 0
	for _, e := range exs {
		total += e.full
	}
	prunedUpTo := 0 // exs[:prunedUpTo] are pruned
	for total > room && prunedUpTo < len(exs) {
		e := exs[prunedUpTo]
		total -= e.full - e.pruned
		prunedUpTo++
	}
	dropUpTo := 0 // exs[:dropUpTo] are dropped
	for total > room && dropUpTo < len(exs) {
		total -= exs[dropUpTo].pruned
		dropUpTo++
	}
	sel := selection{tokens: total, dropped: dropUpTo}
	for i := dropUpTo; i < len(exs); i++ {
		e := exs[i]
		if i < prunedUpTo && e.stubs != nil {
			sel.msgs = append(sel.msgs, e.stubs...)
			sel.pruned++
			continue
		}
		sel.msgs = append(sel.msgs, e.msgs...)
	}
	return sel
}

// preparedRequest is a request fitted to the window.
type preparedRequest struct {
	msgs     []demiurge.ModelMessage
	stable   int // leading messages that stay byte-stable (system, pre-history, history)
	raw      int // raw token count of the whole request
	estimate int // calibrated
	sel      selection
}

// fitted is the context of one turn's model calls: counts that do not
// change from step to step are made once.
type fitted struct {
	win       *window
	layers    contextLayers
	exs       []exchange
	sysTokens int // system text, summary and non-history contributions
	toolToks  int
	histFull  int // raw tokens of the whole history
}

func newFitted(win *window, l contextLayers, tools []demiurge.ToolSpec, cache *countCache) *fitted {
	f := &fitted{win: win, layers: l}
	f.exs = exchanges(l.history, win.counter, cache)
	for _, e := range f.exs {
		f.histFull += e.full
	}
	f.sysTokens = tokens.PerRequest + win.counter.Count(l.systemText())
	for _, c := range l.contributions {
		if strings.TrimSpace(c.Text) != "" {
			f.sysTokens += tokens.PerMessage + win.counter.Count(c.Text)
		}
	}
	f.toolToks = countTools(win.counter, tools, cache)
	return f
}

// wantsCompaction reports whether the history takes more than the
// compaction threshold of the budget.
func (f *fitted) wantsCompaction(userText string) bool {
	base := f.sysTokens + f.toolToks + countMessage(f.win.counter, demiurge.ModelMessage{Role: demiurge.RoleUser, Content: userText})
	return float64(f.win.scaled(base+f.histFull)) > compactThreshold*float64(f.win.budget())
}

// prepare assembles one request within the budget, or fails with
// context_overflow before any provider I/O: the minimal context (system,
// summary, the user message and this turn's messages, with this turn's
// older tool results pruned) must fit.
func (f *fitted) prepare(userText string, inTurn []demiurge.ModelMessage) (preparedRequest, error) {
	w := f.win
	budget := w.budget()
	user := countMessage(w.counter, demiurge.ModelMessage{Role: demiurge.RoleUser, Content: userText})
	inTurn, turnToks := fitInTurn(w, inTurn, budget-w.scaled(f.sysTokens+f.toolToks+user))
	base := f.sysTokens + f.toolToks + user + turnToks
	if w.scaled(base) > budget {
		return preparedRequest{}, w.overflow("the minimal context (system, summary, newest user message and this turn's steps)", w.scaled(base))
	}
	// room is in raw tokens: the budget left, uncalibrated.
	room := int(float64(budget-w.scaled(base)) / w.calib.Factor())
	sel := selectHistory(f.exs, room)
	msgs, stable := assemble(f.layers, sel.msgs, userText, inTurn)
	raw := base + sel.tokens
	return preparedRequest{msgs: msgs, stable: stable, raw: raw, estimate: w.scaled(raw), sel: sel}, nil
}

// fitInTurn prunes this turn's tool results, oldest first, to stubs when
// the turn's own messages do not fit room; the newest step's results are
// kept whole if anything can be. It returns the messages and their raw
// count.
func fitInTurn(w *window, in []demiurge.ModelMessage, room int) ([]demiurge.ModelMessage, int) {
	counts := make([]int, len(in))
	total := 0
	for i, m := range in {
		counts[i] = countMessage(w.counter, m)
		total += counts[i]
	}
	if w.scaled(total) <= room {
		return in, total
	}
	out := append([]demiurge.ModelMessage(nil), in...)
	for i := range out {
		if w.scaled(total) <= room {
			break
		}
		if out[i].Role != demiurge.RoleTool {
			continue
		}
		out[i].Content = toolStub(out[i].Name, "", in[i].Content)
		n := countMessage(w.counter, out[i])
		total += n - counts[i]
	}
	return out, total
}
