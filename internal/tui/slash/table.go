package slash

import (
	"strings"
	"unicode/utf8"
)

// The original's table formatter (format_table, spec surfaces §2.11): a
// title, a header row, a row of dashes and the body, cells joined by " | ".
// Here each row also starts and ends with "|": a GitHub table whatever its
// first cell holds (a row "# | …" would be a heading, "- | …" a list
// item), so the transcript's markdown renderer draws it as one.

// maxColumn bounds a column's width.
const maxColumn = 72

// truncated marks a shortened cell.
const truncated = "...[truncated]"

// table is a titled table; level 1 titles with "#", else "##".
type table struct {
	title   string
	level   int
	headers []string
	rows    [][]string
}

func (t table) String() string {
	widths := make([]int, len(t.headers))
	for i, h := range t.headers {
		widths[i] = max(utf8.RuneCountInString(h), 3)
		for _, r := range t.rows {
			if i < len(r) {
				widths[i] = max(widths[i], min(utf8.RuneCountInString(r[i]), maxColumn))
			}
		}
	}
	var b strings.Builder
	if t.title != "" {
		hashes := "##"
		if t.level == 1 {
			hashes = "#"
		}
		b.WriteString(hashes + " " + t.title + "\n\n")
	}
	line := func(cells []string, cell func(i int, s string) string) {
		parts := make([]string, len(widths))
		for i := range widths {
			s := ""
			if i < len(cells) {
				s = cells[i]
			}
			parts[i] = cell(i, s)
		}
		b.WriteString("| " + strings.Join(parts, " | ") + " |\n")
	}
	line(t.headers, func(i int, s string) string { return pad(escapeCell(s), widths[i]) })
	line(nil, func(i int, _ string) string { return strings.Repeat("-", widths[i]) })
	for _, r := range t.rows {
		line(r, func(i int, s string) string { return pad(escapeCell(shorten(s, widths[i], truncated)), widths[i]) })
	}
	return strings.TrimRight(b.String(), "\n")
}

// keyValues is the original's key/value table: headers key and value, one
// row per pair in order.
func keyValues(title string, pairs [][2]string) string {
	t := table{title: title, headers: []string{"key", "value"}}
	for _, p := range pairs {
		t.rows = append(t.rows, []string{p[0], p[1]})
	}
	return t.String()
}

func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// escapeCell keeps a cell one cell: a "|" would end it and a newline the
// row.
func escapeCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// shorten collapses whitespace and cuts s to limit characters, the cut
// marked by marker (the original's shorten).
func shorten(s string, limit int, marker string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	keep := limit - utf8.RuneCountInString(marker)
	if keep <= 0 {
		return string([]rune(s)[:limit])
	}
	return strings.TrimRight(string([]rune(s)[:keep]), " ") + marker
}
