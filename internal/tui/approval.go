package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/demiurge/demiurge/effect"
)

// question is one approval question waiting for the operator. The turn's
// approver blocks until reply receives a decision or the question is
// withdrawn (its turn ended); anything but an explicit allow is a denial.
type question struct {
	req   effect.ApprovalRequest
	reply chan string // buffered 1: the model never blocks on an answer
	// answered is set by the model once it sent the reply.
	answered bool
}

func newQuestion(req effect.ApprovalRequest) *question {
	return &question{req: req, reply: make(chan string, 1)}
}

// answer sends the decision once; later answers are dropped.
func (q *question) answer(decision string) {
	if q.answered {
		return
	}
	q.answered = true
	q.reply <- decision
}

// approvalPanel shows the first of the open questions.
type approvalPanel struct {
	selected int  // 0 allow once, 1 allow for session, 2 deny
	full     bool // f: the whole arguments instead of a short preview
}

var approvalChoices = [3]struct{ label, key, decision string }{
	{"1. allow once", "y", effect.DecisionAllowOnce},
	{"2. allow for session", "a", effect.DecisionAllowSession},
	{"3. deny", "n", effect.DecisionDeny},
}

// The panel's fixed strings (spec surfaces §2.7, exact).
const (
	approvalTitle = "Approval required"
	approvalHint  = "Enter selects · Up/Down moves · f toggles command · Esc denies"
)

// previewLines is how much of the arguments the panel shows unless full.
const previewLines = 4

// view draws the panel for q, of waiting more questions behind it, in at
// most maxHeight lines.
func (p *approvalPanel) view(th *theme, q *question, waiting, w, maxHeight int) []string {
	r := q.req
	title := th.accentBold.Render(approvalTitle)
	if waiting > 0 {
		title += th.muted.Render(fmt.Sprintf("  (%d more waiting)", waiting))
	}
	lines := []string{th.accentText.Render(strings.Repeat("─", w)), title}
	head := clean(r.Tool) + " · risk " + clean(orDefault(r.Risk, "unknown"))
	if r.Action != "" {
		head += " · " + clean(r.Action)
	}
	lines = append(lines, th.bold.Render(shorten(oneLine(head), w)))
	if r.Summary != "" {
		lines = append(lines, styleAll(th.muted, wrapPlain(clean(r.Summary), w))...)
	}
	var facts []string
	if r.Capability != "" {
		facts = append(facts, "capability: "+clean(r.Capability))
	}
	if r.Target != "" {
		facts = append(facts, "target: "+clean(r.Target))
	}
	if len(facts) > 0 {
		lines = append(lines, styleAll(th.text, wrapPlain(oneLine(strings.Join(facts, "   ")), w))...)
	}
	// Choices and hint come last and must always fit; the preview and
	// notes get what room is left.
	var tailLines []string
	for i, c := range approvalChoices {
		label := c.label + " (" + c.key + ")"
		if i == p.selected {
			tailLines = append(tailLines, th.selected.Render("› "+label))
		} else {
			tailLines = append(tailLines, th.muted.Render("  "+label))
		}
	}
	tailLines = append(tailLines, th.faint.Render(shorten(approvalHint, w)))

	var middle []string
	if len(r.Preview) > 0 {
		text := previewText(r.Preview, p.full)
		pl := wrapPlain(clean(text), w-2)
		if !p.full && len(pl) > previewLines {
			pl = append(pl[:previewLines:previewLines], "… (f shows all)")
		}
		for _, l := range pl {
			middle = append(middle, th.text.Render("  "+l))
		}
	}
	for _, n := range r.Notes {
		middle = append(middle, styleAll(th.faint, wrapPlain("note: "+clean(n), w))...)
	}
	room := maxHeight - len(lines) - len(tailLines)
	if room < len(middle) {
		if room <= 0 {
			middle = nil
		} else {
			middle = append(middle[:room-1:room-1], th.faint.Render("…"))
		}
	}
	lines = append(lines, middle...)
	lines = append(lines, tailLines...)
	if len(lines) > maxHeight && maxHeight > 0 {
		// A very short terminal: keep the title and the choices.
		lines = append(lines[1:2], tailLines...)
		if len(lines) > maxHeight {
			lines = lines[len(lines)-maxHeight:]
		}
	}
	return lines
}

// previewText is the redacted preview of the arguments: the command of a
// terminal call as itself, else one "key: value" line per argument (JSON
// values; the full view shows strings as they are).
func previewText(preview map[string]any, full bool) string {
	if cmd, ok := preview["command"].(string); ok && len(preview) == 1 {
		return "$ " + cmd
	}
	keys := make([]string, 0, len(preview))
	for k := range preview {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		str, isStr := preview[k].(string)
		switch {
		case full && isStr && strings.Contains(str, "\n"):
			// The full view shows multi-line text as the lines it is.
			fmt.Fprintf(&b, "%s:\n%s\n", k, str)
		case full && isStr:
			fmt.Fprintf(&b, "%s: %s\n", k, str)
		default:
			v, err := json.Marshal(preview[k])
			if err != nil {
				v = []byte("?")
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
