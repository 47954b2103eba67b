package tui

import (
	"strings"
)

type entryKind int

const (
	kindUser      entryKind = iota // a message the operator sent
	kindAssistant                  // the core's reply (markdown, may be streaming)
	kindSystem                     // a command's output (markdown)
	kindNotice                     // one line of news: interrupts, queueing, errors
	kindTool                       // a tool card
)

// noticeLevel is how a notice is coloured.
type noticeLevel int

const (
	levelInfo noticeLevel = iota
	levelWarning
	levelError
)

// entry is one item of the transcript. Its lines are cached per width and
// version: a change (a delta, a card update) bumps version, and only that
// entry is rendered again.
type entry struct {
	kind  entryKind
	text  string // already clean()ed
	level noticeLevel
	// streaming marks an assistant reply still arriving; its completed
	// blocks are rendered once (stable*) and only the tail again.
	streaming bool
	tool      *toolCard

	version int

	cacheWidth, cacheVersion int
	cacheDisplay             toolDisplay
	cached                   []string

	stableText  string
	stableWidth int
	stableLines []string
}

// renderCtx is what rendering needs besides the entry.
type renderCtx struct {
	th      *theme
	md      *markdown
	width   int // columns available to the transcript
	display toolDisplay
}

func (e *entry) changed() { e.version++ }

// block is the entry's lines and a blank separator line; a card hidden by
// the quiet display has no block at all.
func (e *entry) block(rc *renderCtx) []string {
	if e.cached != nil && e.cacheWidth == rc.width && e.cacheVersion == e.version && e.cacheDisplay == rc.display {
		return e.cached
	}
	lines := e.render(rc)
	for i, l := range lines {
		if width(l) > rc.width {
			lines[i] = truncate(l, rc.width)
		}
	}
	if len(lines) > 0 {
		lines = append(lines, "")
	}
	e.cached, e.cacheWidth, e.cacheVersion, e.cacheDisplay = lines, rc.width, e.version, rc.display
	return lines
}

func (e *entry) render(rc *renderCtx) []string {
	th := rc.th
	switch e.kind {
	case kindUser:
		return renderUser(th, e.text, rc.width)
	case kindAssistant:
		return labelled(th.accentBold.Render("demiurge"), th.accentText.Render("▎ "), e.markdown(rc, rc.width-2))
	case kindSystem:
		return labelled(th.system.Render("system"), th.system.Render("▎ "), rc.md.render(e.text, rc.width-2))
	case kindNotice:
		st := th.accentText
		switch e.level {
		case levelError:
			st = th.errorText
		case levelWarning:
			st = th.warningText
		}
		lines := wrapPlain(oneLineKeepBreaks(e.text), rc.width-2)
		for i, l := range lines {
			prefix := "  "
			if i == 0 {
				prefix = "• "
			}
			lines[i] = st.Render(prefix + l)
		}
		return lines
	case kindTool:
		return e.tool.render(rc)
	}
	return nil
}

// markdown renders the reply, incrementally while it streams.
func (e *entry) markdown(rc *renderCtx, w int) []string {
	if !e.streaming {
		return rc.md.render(e.text, w)
	}
	stable, tail := stableSplit(e.text)
	if stable != e.stableText || w != e.stableWidth {
		e.stableText, e.stableWidth = stable, w
		e.stableLines = nil
		if strings.TrimSpace(stable) != "" {
			e.stableLines = rc.md.render(stable, w)
		}
	}
	out := append([]string(nil), e.stableLines...)
	if strings.TrimSpace(tail) != "" {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, rc.md.render(tail, w)...)
	}
	if len(out) == 0 {
		out = []string{rc.th.faint.Render("…")}
	}
	return out
}

// labelled puts a label line above body lines, each behind a gutter.
func labelled(label, gutter string, body []string) []string {
	out := make([]string, 0, len(body)+1)
	out = append(out, label)
	for _, l := range body {
		out = append(out, gutter+l)
	}
	return out
}

// renderUser draws the operator's message: the "you" label and the text
// behind a gutter in the user colour, at the left edge or, with
// ui.user_message_align right, as a block at the right edge
// (width max(18, min(64, 82% of the columns, longest line + 4))).
func renderUser(th *theme, text string, w int) []string {
	if !th.alignRight {
		body := wrapPlain(text, w-2)
		return labelled(th.userBold.Render("you"), th.userText.Render("▎ "), styleAll(th.text, body))
	}
	longest := 0
	for _, l := range strings.Split(text, "\n") {
		longest = max(longest, width(l))
	}
	bw := max(18, min(64, w*82/100, w, longest+4))
	bw = min(bw, w)
	body := wrapPlain(text, bw-2)
	indent := strings.Repeat(" ", max(0, w-bw))
	out := []string{indent + padLeft(th.userBold.Render("you"), bw)}
	for _, l := range body {
		out = append(out, indent+padLeft(th.text.Render(l)+th.userText.Render(" ▎"), bw))
	}
	return out
}

func padLeft(s string, n int) string {
	if w := width(s); w < n {
		return strings.Repeat(" ", n-w) + s
	}
	return s
}

func styleAll(st interface{ Render(...string) string }, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = st.Render(l)
	}
	return out
}

// oneLineKeepBreaks trims a notice, keeping its line breaks.
func oneLineKeepBreaks(s string) string { return strings.TrimSpace(s) }
