package tui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// toolDisplay is how much of each tool call the transcript shows: nothing,
// a card with a short body, or the card with every argument and the whole
// result (core ui.tool_display, the global fallback's, /tool-display).
type toolDisplay string

const (
	displayQuiet   toolDisplay = "quiet"
	displaySummary toolDisplay = "summary"
	displayFull    toolDisplay = "full"
)

func parseToolDisplay(s string) (toolDisplay, bool) {
	switch toolDisplay(s) {
	case displayQuiet, displaySummary, displayFull:
		return toolDisplay(s), true
	}
	return "", false
}

// cardState is where a tool call is.
type cardState int

const (
	cardRunning cardState = iota
	cardWaiting           // an approval question is open for it
	cardDone
)

// toolCard is one tool call as the transcript shows it. Arguments are the
// model's view, redacted by the turn; every string is clean()ed before it
// is drawn.
type toolCard struct {
	callID, name string
	// slot is the path of the slot whose ctx.tools.call this is ("" for
	// the model's).
	slot     string
	args     map[string]any
	state    cardState
	status   demiurge.EffectStatus
	isError  bool
	started  time.Time
	finished time.Time
	// output is the operator's view of the result ("" until known).
	output string
	// summaryText is the turn's one-line summary of the arguments ("" :
	// the card makes its own); dur the call's duration once it ended.
	summaryText string
	dur         time.Duration
	// display is the tool's own display data: the diff a write made, a
	// command's exit code and output tail.
	display  turn.ToolDisplay
	expanded bool
}

// Limits of a card's body.
const (
	summaryBodyLines = 8   // diff or output lines in summary mode
	fullBodyLines    = 400 // in full mode or expanded
	terminalTail     = 4   // output lines of a terminal call in summary mode
)

func (c *toolCard) render(rc *renderCtx) []string {
	if rc.display == displayQuiet && !c.expanded {
		return nil
	}
	full := rc.display == displayFull || c.expanded
	th := rc.th
	w := rc.width
	icon, word := c.badge(th)
	head := icon + " " + th.bold.Render(clean(c.name))
	if c.slot != "" {
		head += th.muted.Render(" from " + clean(c.slot))
	}
	right := word
	if d := c.duration(); d != "" {
		right += th.muted.Render(" · " + d)
	}
	if sum := c.summary(); sum != "" {
		room := w - width(head) - width(right) - 6
		if room > 8 {
			head += th.muted.Render(" · " + shorten(sum, room))
		}
	}
	lines := []string{head + th.muted.Render(" · ") + right}
	limit := summaryBodyLines
	if full {
		limit = fullBodyLines
	}
	body := c.body(th, full, limit, w-4)
	for _, l := range body {
		lines = append(lines, th.border.Render("  │ ")+l)
	}
	return lines
}

// badge is the card's icon and status word.
func (c *toolCard) badge(th *theme) (string, string) {
	switch c.state {
	case cardWaiting:
		return th.accentBold.Render("?"), th.accentText.Render("waiting for approval")
	case cardRunning:
		return th.accentText.Render("…"), th.accentText.Render("running")
	}
	word := strings.ReplaceAll(string(c.status), "_", " ")
	if word == "" {
		word = "done"
	}
	if c.status == demiurge.EffectSucceeded && !c.isError {
		return th.successText.Render("✓"), th.successText.Render(word)
	}
	return th.errorText.Render("✕"), th.errorText.Render(word)
}

func (c *toolCard) duration() string {
	if c.state == cardDone && c.dur > 0 {
		return formatDuration(c.dur)
	}
	if c.state != cardDone || c.started.IsZero() || c.finished.IsZero() {
		return ""
	}
	return formatDuration(c.finished.Sub(c.started))
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// summary is the one-line argument summary: the command of terminal, the
// path of the file tools, the turn's summary or the arguments as compact
// JSON otherwise.
func (c *toolCard) summary() string {
	switch c.name {
	case "terminal":
		if cmd := c.str("command"); cmd != "" {
			return "$ " + oneLine(clean(cmd))
		}
	case "read_file", "write_file", "patch":
		if p := c.str("path"); p != "" {
			return oneLine(clean(p))
		}
	}
	if c.summaryText != "" {
		return oneLine(clean(c.summaryText))
	}
	if len(c.args) == 0 {
		return ""
	}
	return oneLine(clean(compactJSON(c.args)))
}

func (c *toolCard) str(key string) string {
	s, _ := c.args[key].(string)
	return s
}

// body is what goes under the card's head: the diff of write_file and
// patch, the command, exit code and output tail of terminal, an excerpt of
// the output of the others; in full mode also every argument.
func (c *toolCard) body(th *theme, full bool, limit, w int) []string {
	var out []string
	switch {
	case c.display.Diff != "" && (c.name == "write_file" || c.name == "patch"):
		out = append(out, cut(th, unifiedDiff(th, clean(c.display.Diff)), limit)...)
	case c.name == "write_file":
		if content, ok := c.args["content"].(string); ok {
			out = append(out, th.diffAt.Render("+++ "+clean(c.str("path"))))
			out = append(out, cut(th, diffLines(th, "", clean(content)), limit)...)
		}
	case c.name == "patch":
		old, _ := c.args["old"].(string)
		nw, _ := c.args["new"].(string)
		if old != "" || nw != "" {
			out = append(out, th.diffAt.Render("@@ "+clean(c.str("path"))))
			out = append(out, cut(th, diffLines(th, clean(old), clean(nw)), limit)...)
		}
	case c.name == "terminal":
		// The head shows the command on one line; the body repeats it
		// whole only when it is shown in full.
		if cmd := c.str("command"); cmd != "" && (full || strings.Contains(cmd, "\n")) {
			for _, l := range wrapPlain("$ "+clean(cmd), w) {
				out = append(out, th.text.Render(l))
			}
		}
		if d := c.display; d.HasExitCode || d.Tail != "" {
			if d.HasExitCode {
				st := th.successText
				if d.ExitCode != 0 {
					st = th.errorText
				}
				word := fmt.Sprintf("exit %d", d.ExitCode)
				if d.TimedOut {
					word += " (timed out)"
				}
				out = append(out, st.Render(word))
			}
			n := terminalTail
			if full {
				n = limit
			}
			out = append(out, styleAll(th.muted, tailLines(clean(d.Tail), n, w))...)
			return out
		}
		if c.output != "" {
			code, rest := terminalResult(c.output)
			if code != "" {
				st := th.successText
				if code != "0" {
					st = th.errorText
				}
				out = append(out, st.Render("exit "+code))
			}
			n := terminalTail
			if full {
				n = limit
			}
			out = append(out, styleAll(th.muted, tailLines(clean(rest), n, w))...)
		}
		return out
	}
	if full {
		if args := c.fullArgs(); args != "" {
			out = append(out, th.muted.Render("arguments"))
			out = append(out, cut(th, styleAll(th.text, wrapPlain(clean(args), w)), limit)...)
		}
	}
	if c.output != "" && c.name != "write_file" && c.name != "patch" || (full && c.output != "") {
		if full {
			out = append(out, th.muted.Render("result"))
			out = append(out, cut(th, styleAll(th.muted, wrapPlain(clean(c.output), w)), limit)...)
		} else {
			out = append(out, styleAll(th.muted, headLines(clean(c.output), 3, w))...)
		}
	}
	return out
}

// fullArgs is the arguments as indented JSON, without the ones the body
// already shows as a diff.
func (c *toolCard) fullArgs() string {
	args := c.args
	if c.name == "write_file" || c.name == "patch" {
		args = map[string]any{}
		for k, v := range c.args {
			if k != "content" && k != "old" && k != "new" {
				args[k] = v
			}
		}
	}
	if len(args) == 0 {
		return ""
	}
	b, err := json.MarshalIndent(args, "", "  ")
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
}

func compactJSON(v map[string]any) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		b, err := json.Marshal(v[k])
		if err != nil {
			b = []byte("?")
		}
		parts = append(parts, k+": "+string(b))
	}
	return strings.Join(parts, ", ")
}

// cut keeps the first n lines, saying how many more there are.
func cut(th *theme, lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	more := len(lines) - n
	return append(lines[:n:n], th.faint.Render(fmt.Sprintf("… %d more lines (Ctrl-O expands)", more)))
}

func headLines(s string, n, w int) []string {
	lines := wrapPlain(strings.TrimRight(s, "\n"), w)
	if len(lines) > n {
		lines = append(lines[:n:n], "…")
	}
	return lines
}

func tailLines(s string, n, w int) []string {
	lines := wrapPlain(strings.Trim(s, "\n"), w)
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return lines
}

var exitCodeLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^exit_code: (-?\d+)\s*$`) })

// terminalResult reads the exit code from a terminal result and returns
// the rest of it.
func terminalResult(content string) (code, rest string) {
	m := exitCodeLine().FindStringSubmatchIndex(content)
	if m == nil {
		return "", content
	}
	return content[m[2]:m[3]], content[:m[0]] + content[m[1]:]
}
