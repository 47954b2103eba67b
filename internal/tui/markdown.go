package tui

import (
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
)

// markdown renders assistant and command text: glamour's dark style with
// its highlighted code blocks, without the document margins (the
// transcript indents the body itself). One renderer is kept per width:
// building one parses the style, rendering with it is cheap.
type markdown struct {
	byWidth map[int]*glamour.TermRenderer
}

func markdownStyle() ansi.StyleConfig {
	st := styles.DarkStyleConfig
	zero := uint(0)
	st.Document.Margin = &zero
	st.Document.BlockPrefix = ""
	st.Document.BlockSuffix = ""
	return st
}

// render renders text at width columns. A renderer that cannot be built or
// fails on the text leaves the text as it is, wrapped: markdown is a
// presentation, never a reason to lose a reply.
func (m *markdown) render(text string, width int) []string {
	width = max(width, 10)
	r := m.byWidth[width]
	if r == nil {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStyles(markdownStyle()), glamour.WithWordWrap(width))
		if err != nil {
			return wrapPlain(text, width)
		}
		if m.byWidth == nil {
			m.byWidth = map[int]*glamour.TermRenderer{}
		}
		m.byWidth[width] = r
	}
	out, err := r.Render(text)
	if err != nil {
		return wrapPlain(text, width)
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return trimBlankEdges(lines)
}

// trimBlankEdges drops blank lines (after escape codes) at both ends.
func trimBlankEdges(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(stripANSI(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(stripANSI(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// stableSplit splits streaming markdown where its completed blocks end:
// at the last blank line outside a code fence. The prefix no longer
// changes as text arrives, so it is rendered once; only the tail is
// rendered again for each delta.
func stableSplit(text string) (stable, tail string) {
	inFence := false
	cut := 0
	pos := 0
	for pos < len(text) {
		end := strings.IndexByte(text[pos:], '\n')
		if end < 0 {
			break // the last line is still being written
		}
		line := text[pos : pos+end]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
		}
		pos += end + 1
		if !inFence && trimmed == "" {
			cut = pos
		}
	}
	return text[:cut], text[cut:]
}
