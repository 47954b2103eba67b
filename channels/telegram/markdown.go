package telegram

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// MessageLimit is Telegram's message length, in UTF-16 code units.
const MessageLimit = 4096

// mdv2Special are the characters MarkdownV2 reserves outside entities.
const mdv2Special = "_*[]()~`>#+-=|{}.!\\"

var (
	reTableSep   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$`) })
	reInlineCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`\n]+)`") })
	reLink       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([^\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)`) })
	reHeading    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*$`) })
	reBold       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*([^*\n]+?)\*\*`) })
	reItalic     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*([^*\n]+?)\*`) })
	reStrike     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`~~([^~\n]+?)~~`) })
	rePlace      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x00([0-9]+)\x00") })
)

// FormatMarkdownV2 converts the model's Markdown to Telegram MarkdownV2
// (spec surfaces §3.8.10): tables become one block per row, fenced and
// inline code and link URLs are escaped as their entities require,
// headings and **bold** become bold, *italic* italic, ~~strike~~ strike,
// and every other reserved character is escaped.
func FormatMarkdownV2(text string) string {
	text = tablesToBlocks(text)
	var out strings.Builder
	lines := strings.SplitAfter(text, "\n")
	var prose []string
	flush := func() {
		out.WriteString(formatProse(strings.Join(prose, "")))
		prose = prose[:0]
	}
	inFence := false
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if !inFence {
				flush()
				inFence = true
				out.WriteString(line)
				continue
			}
			inFence = false
			out.WriteString(line)
			continue
		}
		if inFence {
			out.WriteString(escapeCode(line))
			continue
		}
		prose = append(prose, line)
	}
	flush()
	return out.String()
}

func escapeCode(s string) string {
	return strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s)
}

// escapeText escapes every reserved character, leaving placeholders.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && strings.ContainsRune(mdv2Special, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func formatProse(s string) string {
	var saved []string
	keep := func(v string) string {
		saved = append(saved, v)
		return "\x00" + strconv.Itoa(len(saved)-1) + "\x00"
	}
	s = strings.ReplaceAll(s, "\x00", "")
	s = reInlineCode().ReplaceAllStringFunc(s, func(m string) string {
		return keep("`" + escapeCode(m[1:len(m)-1]) + "`")
	})
	s = reLink().ReplaceAllStringFunc(s, func(m string) string {
		p := reLink().FindStringSubmatch(m)
		url := strings.NewReplacer(`\`, `\\`, `)`, `\)`).Replace(p[2])
		return keep("[" + escapeText(p[1]) + "](" + url + ")")
	})
	s = reHeading().ReplaceAllStringFunc(s, func(m string) string {
		inner := strings.TrimSpace(reHeading().FindStringSubmatch(m)[1])
		if strings.HasPrefix(inner, "**") && strings.HasSuffix(inner, "**") && len(inner) > 4 {
			inner = inner[2 : len(inner)-2]
		}
		return keep("*" + escapeText(inner) + "*")
	})
	s = reBold().ReplaceAllStringFunc(s, func(m string) string { return keep("*" + escapeText(m[2:len(m)-2]) + "*") })
	s = reItalic().ReplaceAllStringFunc(s, func(m string) string { return keep("_" + escapeText(m[1:len(m)-1]) + "_") })
	s = reStrike().ReplaceAllStringFunc(s, func(m string) string { return keep("~" + escapeText(m[2:len(m)-2]) + "~") })
	s = escapeText(s)
	for i := 0; i < 8 && strings.Contains(s, "\x00"); i++ {
		s = rePlace().ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.Atoi(m[1 : len(m)-1])
			return saved[n]
		})
	}
	return s
}

// tablesToBlocks rewrites Markdown tables outside code fences as one block
// per row: the row's first non-empty cell (or "Row <n>") in bold, then
// "- <header>: <value>" for each pair whose value is not that heading.
func tablesToBlocks(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	inFence := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if inFence || !strings.Contains(line, "|") || i+1 >= len(lines) || !reTableSep().MatchString(lines[i+1]) {
			out = append(out, line)
			continue
		}
		j := i + 2
		for j < len(lines) && strings.Contains(lines[j], "|") {
			j++
		}
		header := cells(line)
		if j-i < 3 || len(header) < 2 {
			out = append(out, lines[i:j]...)
			i = j - 1
			continue
		}
		var blocks []string
		for n, row := range lines[i+2 : j] {
			cs := cells(row)
			heading := fmt.Sprintf("Row %d", n+1)
			for _, c := range cs {
				if c != "" {
					heading = c
					break
				}
			}
			block := []string{"**" + heading + "**"}
			for k := 0; k < len(header) && k < len(cs); k++ {
				if cs[k] == heading {
					continue
				}
				block = append(block, "- "+header[k]+": "+cs[k])
			}
			blocks = append(blocks, strings.Join(block, "\n"))
		}
		out = append(out, strings.Join(blocks, "\n\n"))
		i = j - 1
	}
	return strings.Join(out, "\n")
}

func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	parts := strings.Split(row, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

var (
	reEscaped = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\(.)`) })
	reWrap    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\*\*(.+?)\*\*|\*(.+?)\*|__(.+?)__|_(.+?)_|~(.+?)~|\|\|(.+?)\|\|`)
	})
)

// stripMDV2 turns MarkdownV2 back into plain text: wrappers removed,
// escapes undone (the fallback for a chunk Telegram would not parse).
func stripMDV2(s string) string {
	var lit []string
	s = reEscaped().ReplaceAllStringFunc(s, func(m string) string {
		lit = append(lit, m[1:])
		return "\x00" + strconv.Itoa(len(lit)-1) + "\x00"
	})
	s = reWrap().ReplaceAllStringFunc(s, func(m string) string {
		for _, g := range reWrap().FindStringSubmatch(m)[1:] {
			if g != "" {
				return g
			}
		}
		return m
	})
	return rePlace().ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		return lit[n]
	})
}

// units is the length of s in UTF-16 code units, Telegram's measure.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// prefixWithin is the longest prefix of s within budget UTF-16 units.
func prefixWithin(s string, budget int) string {
	n := 0
	for i, r := range s {
		n += utf16.RuneLen(r)
		if n > budget {
			return s[:i]
		}
	}
	return s
}

// SplitMessage splits text into Telegram messages (spec surfaces §3.8.9):
// one chunk when it fits the limit; else chunks cut within limit − 16
// units (less a carried code fence), at the last newline past half the
// cut, else the last space, else hard; a chunk that leaves a ``` fence
// open is closed and the fence reopened in the next; with more than one
// chunk each gets " (i/n)" (" \(i/n\)" for MarkdownV2).
func SplitMessage(text string, limit int, mdv2 bool) []string {
	if units(text) <= limit {
		return []string{text}
	}
	var chunks []string
	rest := text
	inFence := false
	for strings.TrimSpace(rest) != "" {
		prefix, reserve := "", 0
		if inFence {
			prefix = "```\n"
			reserve = units("```\n") + units("\n```")
		}
		budget := limit - 16 - reserve
		var chunk string
		if units(rest) <= budget {
			chunk, rest = rest, ""
		} else {
			cut := prefixWithin(rest, budget)
			idx := len(cut)
			if nl := strings.LastIndex(cut, "\n"); nl > len(cut)/2 {
				idx = nl
			} else if sp := strings.LastIndex(cut, " "); sp > 0 {
				idx = sp
			}
			chunk, rest = rest[:idx], rest[idx:]
		}
		chunk = prefix + strings.TrimSpace(chunk)
		rest = strings.TrimLeft(rest, " \n")
		if strings.Count(chunk, "```")%2 == 1 {
			chunk += "\n```"
			inFence = true
		} else {
			inFence = false
		}
		chunks = append(chunks, chunk)
	}
	if len(chunks) > 1 {
		for i := range chunks {
			if mdv2 {
				chunks[i] += fmt.Sprintf(` \(%d/%d\)`, i+1, len(chunks))
			} else {
				chunks[i] += fmt.Sprintf(" (%d/%d)", i+1, len(chunks))
			}
		}
	}
	return chunks
}
