package tui

import (
	"strings"
	"unicode"

	"github.com/mattn/go-runewidth"
)

// composer is the message being written: one rune buffer and a cursor.
// Pastes go in whole, however large; only the rows around the cursor are
// drawn. Up on the first row and Down on the last walk the history.
type composer struct {
	buf []rune
	cur int

	history []string // sent messages, oldest first
	histPos int      // len(history) while not browsing
	draft   string   // the unsent text saved when browsing started

	// completions are the Tab candidates for the current text; compIdx
	// the one last inserted (-1 none).
	completions []string
	compIdx     int
	compFor     string // the text the candidates were computed for
}

// maxComposerRows is the most rows the composer takes on screen.
const maxComposerRows = 8

func (c *composer) value() string { return string(c.buf) }
func (c *composer) empty() bool   { return len(c.buf) == 0 }

func (c *composer) set(s string) {
	c.buf = []rune(s)
	c.cur = len(c.buf)
}

func (c *composer) reset() {
	c.buf, c.cur = nil, 0
	c.histPos = len(c.history)
	c.completions, c.compFor = nil, ""
}

// insert puts text at the cursor, newlines normalised.
func (c *composer) insert(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	rs := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			rs = append(rs, ' ', ' ', ' ', ' ')
		case r == '\n' || !unicode.IsControl(r):
			rs = append(rs, r)
		}
	}
	c.buf = append(c.buf[:c.cur], append(rs, c.buf[c.cur:]...)...)
	c.cur += len(rs)
}

func (c *composer) backspace() {
	if c.cur > 0 {
		c.buf = append(c.buf[:c.cur-1], c.buf[c.cur:]...)
		c.cur--
	}
}

func (c *composer) deleteForward() {
	if c.cur < len(c.buf) {
		c.buf = append(c.buf[:c.cur], c.buf[c.cur+1:]...)
	}
}

func (c *composer) left() {
	if c.cur > 0 {
		c.cur--
	}
}

func (c *composer) right() {
	if c.cur < len(c.buf) {
		c.cur++
	}
}

// lineStart and lineEnd are the ends of the logical line at the cursor.
func (c *composer) lineStart() int {
	i := c.cur
	for i > 0 && c.buf[i-1] != '\n' {
		i--
	}
	return i
}

func (c *composer) lineEnd() int {
	i := c.cur
	for i < len(c.buf) && c.buf[i] != '\n' {
		i++
	}
	return i
}

func (c *composer) home() { c.cur = c.lineStart() }
func (c *composer) end()  { c.cur = c.lineEnd() }

// killToStart and killToEnd delete to the ends of the line (Ctrl-U, Ctrl-K).
func (c *composer) killToStart() {
	s := c.lineStart()
	c.buf = append(c.buf[:s], c.buf[c.cur:]...)
	c.cur = s
}

func (c *composer) killToEnd() {
	e := c.lineEnd()
	if e == c.cur && e < len(c.buf) {
		e++ // at the end of a line: join the next one
	}
	c.buf = append(c.buf[:c.cur], c.buf[e:]...)
}

func (c *composer) wordLeft() int {
	i := c.cur
	for i > 0 && unicode.IsSpace(c.buf[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(c.buf[i-1]) {
		i--
	}
	return i
}

func (c *composer) wordRight() int {
	i := c.cur
	for i < len(c.buf) && unicode.IsSpace(c.buf[i]) {
		i++
	}
	for i < len(c.buf) && !unicode.IsSpace(c.buf[i]) {
		i++
	}
	return i
}

func (c *composer) deleteWordBack() {
	s := c.wordLeft()
	c.buf = append(c.buf[:s], c.buf[c.cur:]...)
	c.cur = s
}

// row is one screen row of the buffer: runes [start, end); newline is set
// when a newline (not the width) ended it.
type row struct {
	start, end int
	newline    bool
}

// layout splits the buffer into rows of at most w columns.
func (c *composer) layout(w int) []row {
	w = max(w, 2)
	var rows []row
	start, col := 0, 0
	for i, r := range c.buf {
		if r == '\n' {
			rows = append(rows, row{start: start, end: i, newline: true})
			start, col = i+1, 0
			continue
		}
		rw := runewidth.RuneWidth(r)
		if col+rw > w {
			rows = append(rows, row{start: start, end: i})
			start, col = i, 0
		}
		col += rw
	}
	return append(rows, row{start: start, end: len(c.buf)})
}

// cursorAt is the row and column of the cursor in rows.
func (c *composer) cursorAt(rows []row) (int, int) {
	for i, r := range rows {
		last := i == len(rows)-1
		if c.cur >= r.start && (c.cur < r.end || (c.cur == r.end && (r.newline || last))) {
			return i, runewidth.StringWidth(string(c.buf[r.start:c.cur]))
		}
	}
	return len(rows) - 1, 0
}

// vertical moves the cursor one row up (-1) or down (+1), keeping the
// column; it reports false at the first or last row.
func (c *composer) vertical(dir, w int) bool {
	rows := c.layout(w)
	ri, col := c.cursorAt(rows)
	ni := ri + dir
	if ni < 0 || ni >= len(rows) {
		return false
	}
	r := rows[ni]
	i, x := r.start, 0
	for i < r.end {
		rw := runewidth.RuneWidth(c.buf[i])
		if x+rw > col {
			break
		}
		x += rw
		i++
	}
	c.cur = i
	return true
}

// historyPrev and historyNext walk the sent messages; the unsent text is
// kept and comes back past the newest.
func (c *composer) historyPrev() bool {
	if c.histPos == 0 {
		return false
	}
	if c.histPos == len(c.history) {
		c.draft = c.value()
	}
	c.histPos--
	c.set(c.history[c.histPos])
	return true
}

func (c *composer) historyNext() bool {
	if c.histPos >= len(c.history) {
		return false
	}
	c.histPos++
	if c.histPos == len(c.history) {
		c.set(c.draft)
	} else {
		c.set(c.history[c.histPos])
	}
	return true
}

func (c *composer) remember(s string) {
	if n := len(c.history); n == 0 || c.history[n-1] != s {
		c.history = append(c.history, s)
	}
	c.histPos = len(c.history)
}

// complete inserts the next Tab candidate of complete(text); repeated Tabs
// cycle through them.
func (c *composer) complete(candidates func(string) []string) {
	text := c.value()
	if c.completions == nil || text != c.currentCompletion() {
		c.completions, c.compIdx, c.compFor = candidates(text), -1, text
	}
	if len(c.completions) == 0 {
		c.completions = nil
		return
	}
	c.compIdx = (c.compIdx + 1) % len(c.completions)
	c.set(c.completions[c.compIdx])
}

func (c *composer) currentCompletion() string {
	if c.compIdx < 0 || c.compIdx >= len(c.completions) {
		return c.compFor
	}
	return c.completions[c.compIdx]
}

// view draws the rows around the cursor, prefix first, w columns wide in
// all; it returns the lines and the cursor's line and column in them.
func (c *composer) view(th *theme, w int, placeholder string, maxRows int) ([]string, int, int) {
	const prefix = 2
	if c.empty() {
		return []string{th.accentText.Render("› ") + th.faint.Render(shorten(placeholder, w-prefix))}, 0, prefix
	}
	rows := c.layout(w - prefix)
	ri, col := c.cursorAt(rows)
	first := 0
	if len(rows) > maxRows {
		first = min(max(0, ri-maxRows/2), len(rows)-maxRows)
	}
	last := min(len(rows), first+maxRows)
	out := make([]string, 0, last-first)
	for i := first; i < last; i++ {
		p := "  "
		if i == 0 {
			p = "› "
		}
		r := rows[i]
		out = append(out, th.accentText.Render(p)+th.text.Render(string(c.buf[r.start:r.end])))
	}
	return out, ri - first, col + prefix
}
