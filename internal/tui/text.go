package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	xansi "github.com/charmbracelet/x/ansi"
)

// clean makes untrusted text safe to draw: model output, tool arguments and
// results may hold escape sequences a terminal would act on. Control
// characters (C0, DEL, C1) become visible \uXXXX escapes, tabs four
// spaces, CRLF and CR newlines; newlines stay.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r == '\t' || r == '\r' || r == utf8.RuneError || (r != '\n' && unicode.IsControl(r)) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteRune(r)
		case r == '\r':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// oneLine folds whitespace runs, newlines included, into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shorten cuts s to at most n display columns, marking the cut with "…".
func shorten(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if xansi.StringWidth(s) <= n {
		return s
	}
	return xansi.Truncate(s, n, "…")
}

// width is the display width of s, escape codes not counted.
func width(s string) int { return xansi.StringWidth(s) }

func stripANSI(s string) string { return xansi.Strip(s) }

// wrapPlain wraps plain (unstyled) text at n columns: at spaces where it
// can, hard where a word is longer than a line.
func wrapPlain(s string, n int) []string {
	n = max(n, 1)
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if width(line) <= n {
			out = append(out, line)
			continue
		}
		out = append(out, strings.Split(xansi.Wrap(line, n, ""), "\n")...)
	}
	return out
}

// padRight pads a styled line with spaces to n columns.
func padRight(s string, n int) string {
	if w := width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// fit cuts or pads a styled line to exactly n columns.
func fit(s string, n int) string {
	if width(s) > n {
		s = xansi.Truncate(s, n, "")
	}
	return padRight(s, n)
}

// shortID shows a long id by its end: "session_<suffix>" as "s:" and the
// last 8 of the suffix, other ids longer than 10 by their last 10
// (spec surfaces §2.9).
func shortID(id string) string {
	if suf, ok := strings.CutPrefix(id, "session_"); ok && len(suf) > 10 {
		return "s:" + suf[len(suf)-8:]
	}
	if len(id) > 10 {
		return id[len(id)-10:]
	}
	return id
}

// truncate cuts a styled line to n columns.
func truncate(s string, n int) string { return xansi.Truncate(s, n, "") }
