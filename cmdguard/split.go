package cmdguard

import "strings"

// shellSplit is step 3: the text cut into simple segments on the
// operators the guard models (&&, ;, |), or the reason it cannot be.
type shellSplit struct {
	segments    []string
	separators  []string
	unsupported string // non-empty: the reason the text is not modelled
	redirection bool   // an unquoted < or > was seen
}

func (s shellSplit) hasPipe() bool {
	for _, sep := range s.separators {
		if sep == "|" {
			return true
		}
	}
	return false
}

func unsupported(reason string) shellSplit { return shellSplit{unsupported: reason} }

// splitShell cuts cmd on unquoted &&, ; and |. Any other control syntax
// (substitution, heredoc, ||, newline, background &) or an unterminated
// quote makes the text unsupported. Inside single quotes a backslash is
// literal, as in the shell.
func splitShell(cmd string) shellSplit {
	var out shellSplit
	var cur strings.Builder
	var quote byte
	escaped := false
	flush := func(sep string) {
		out.segments = append(out.segments, strings.TrimSpace(cur.String()))
		out.separators = append(out.separators, sep)
		cur.Reset()
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if escaped {
			cur.WriteByte(c)
			escaped = false
			continue
		}
		if quote != 0 {
			cur.WriteByte(c)
			switch {
			case c == quote:
				quote = 0
			case c == '\\' && quote == '"':
				escaped = true
			}
			continue
		}
		switch {
		case c == '\\':
			cur.WriteByte(c)
			escaped = true
			continue
		case c == '\'' || c == '"':
			cur.WriteByte(c)
			quote = c
			continue
		case c == '`' || strings.HasPrefix(cmd[i:], "$("):
			return unsupported("command substitution is not auto-approved")
		case strings.HasPrefix(cmd[i:], "<<"):
			return unsupported("heredoc is not auto-approved")
		case strings.HasPrefix(cmd[i:], "||"):
			return unsupported("conditional OR is not auto-approved")
		case c == '\n' || c == '\r':
			return unsupported("multi-line shell commands are not auto-approved")
		}
		if c == '<' || c == '>' {
			out.redirection = true
		}
		switch {
		case strings.HasPrefix(cmd[i:], "&&"):
			flush("&&")
			i++
		case c == ';':
			flush(";")
		case c == '|':
			flush("|")
		case c == '&':
			return unsupported("background shell operator is not auto-approved")
		default:
			cur.WriteByte(c)
		}
	}
	if quote != 0 {
		return unsupported("unterminated shell quote")
	}
	out.segments = append(out.segments, strings.TrimSpace(cur.String()))
	return out
}
