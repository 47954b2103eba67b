package cmdguard

import (
	"unicode"
	"unicode/utf8"
)

// expansionScan is the result of step 1 on one text.
type expansionScan struct {
	reason   string   // of the highest-priority expansion found
	ruleKey  string   // command-substitution | process-substitution | shell-expansion
	filename bool     // unquoted * ? [ { seen
	payloads []string // bodies of $(...), `...`, <(...), >(...)
}

var expansionPriority = map[string]int{
	"shell-expansion":      1,
	"process-substitution": 2,
	"command-substitution": 3,
}

func (s *expansionScan) record(reason, key string) {
	if expansionPriority[key] > expansionPriority[s.ruleKey] {
		s.reason, s.ruleKey = reason, key
	}
}

// scanExpansions finds what the shell would expand in cmd, quote-aware:
// single quotes are literal; a backslash outside single quotes skips the
// next character; filename and process-substitution syntax count only
// outside any quotes; command substitution and parameter expansion count
// outside single quotes. Comments are not special, so a '#' cannot hide
// what follows it. Unterminated substitutions run to the end of the text.
// The scan works on bytes: every character it looks for is ASCII, and a
// byte of a multi-byte sequence never equals one.
func scanExpansions(cmd string) expansionScan {
	var s expansionScan
	var quote byte
	for i := 0; i < len(cmd); {
		c := cmd[i]
		if next, ok := quoteStep(c, i, &quote); ok {
			i = next
			continue
		}
		if quote == 0 && (c == '*' || c == '?' || c == '[' || c == '{') {
			s.filename = true
		}
		if quote == 0 && (c == '<' || c == '>') && at(cmd, i+1) == '(' {
			end, ok := parenEnd(cmd, i)
			s.payloads = append(s.payloads, payload(cmd, i+2, end, ok))
			s.record("process substitution is not auto-approved", "process-substitution")
			i = end
			continue
		}
		if c == '`' {
			end, ok := backtickEnd(cmd, i)
			s.payloads = append(s.payloads, payload(cmd, i+1, end, ok))
			s.record("command substitution is not auto-approved", "command-substitution")
			i = end
			continue
		}
		if c == '$' {
			switch {
			case at(cmd, i+1) == '(' && at(cmd, i+2) != '(':
				end, ok := parenEnd(cmd, i)
				s.payloads = append(s.payloads, payload(cmd, i+2, end, ok))
				s.record("command substitution is not auto-approved", "command-substitution")
				i = end
				continue
			case at(cmd, i+1) == '(':
				s.record("shell expansion is not auto-approved", "shell-expansion")
				i += 3
				continue
			case at(cmd, i+1) == '[':
				s.record("shell expansion is not auto-approved", "shell-expansion")
				i += 2
				continue
			case at(cmd, i+1) == '{' || startsParameter(cmd, i+1):
				s.record("shell expansion is not auto-approved", "shell-expansion")
			}
		}
		i++
	}
	return s
}

// at returns cmd[i], or 0 past the end.
func at(cmd string, i int) byte {
	if i < len(cmd) {
		return cmd[i]
	}
	return 0
}

// payload returns the body between from and the closing delimiter that
// ends just before end (or the rest of the text when unterminated).
func payload(cmd string, from, end int, terminated bool) string {
	if from > len(cmd) {
		return ""
	}
	to := len(cmd)
	if terminated {
		to = end - 1
	}
	if to < from {
		return ""
	}
	return cmd[from:to]
}

// startsParameter reports whether the character at i begins a parameter
// name after '$': a letter or digit (any script), '_', or a special
// parameter.
func startsParameter(cmd string, i int) bool {
	if i >= len(cmd) {
		return false
	}
	c := cmd[i]
	switch c {
	case '_', '*', '@', '#', '?', '-', '$', '!', '"', '\'':
		return true
	}
	if c < utf8.RuneSelf {
		return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
	}
	r, _ := utf8.DecodeRuneInString(cmd[i:])
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// parenEnd finds the end (index after the closing ')') of the
// parenthesised body that opens with the two bytes at start ("$(", "<(",
// ">("). It returns len(cmd), false when the body is unterminated.
func parenEnd(cmd string, start int) (int, bool) {
	depth := 1
	var quote byte
	for i := start + 2; i < len(cmd); {
		c := cmd[i]
		if next, ok := quoteStep(c, i, &quote); ok {
			i = next
			continue
		}
		if c == '`' {
			end, _ := backtickEnd(cmd, i)
			i = end
			continue
		}
		if quote == '"' {
			// Inside double quotes only a nested substitution counts; it
			// is skipped whole, its own quotes and parentheses with it.
			if c == '$' && at(cmd, i+1) == '(' {
				i, _ = parenEnd(cmd, i)
				continue
			}
			i++
			continue
		}
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return len(cmd), false
}

// backtickEnd finds the index after the backtick closing the one at start.
func backtickEnd(cmd string, start int) (int, bool) {
	for i := start + 1; i < len(cmd); {
		switch cmd[i] {
		case '\\':
			i += 2
			continue
		case '`':
			return i + 1, true
		}
		i++
	}
	return len(cmd), false
}

// quoteStep consumes the quoting byte c at index i: any byte inside single
// quotes, a backslash escape (with the byte it escapes), or an opening or
// closing quote; quote tracks the open quote (0 when none). handled reports
// whether c was consumed, and next is the index to continue from.
func quoteStep(c byte, i int, quote *byte) (next int, handled bool) {
	switch {
	case *quote == '\'':
		if c == '\'' {
			*quote = 0
		}
		return i + 1, true
	case c == '\\':
		return i + 2, true
	case *quote == 0 && c == '\'':
		*quote = '\''
		return i + 1, true
	case c == '"':
		if *quote == '"' {
			*quote = 0
		} else {
			*quote = '"'
		}
		return i + 1, true
	}
	return i, false
}
