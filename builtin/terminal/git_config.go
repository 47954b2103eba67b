package terminal

// A reader of git config files, as git itself parses them (config.c), so
// that the terminal can judge a repository's configuration without running
// git.

import (
	"bytes"
	"fmt"
)

// gitConfigEntry is one variable of a config file: Name is
// section[.subsection].key with section and key lower-cased (the
// subsection of [section "sub"] keeps its case). A key without "=" has no
// value (HasValue false), which git reads as boolean true.
type gitConfigEntry struct {
	Name     string
	Value    string
	HasValue bool
	Line     int
}

// parseGitConfig parses a config file the way git's config.c does
// (git_parse_source): sections "[section]", "[section "sub"]" and the
// older "[section.sub]" (all lower-cased), entries after a header on its
// line too, comments from '#' or ';' outside quotes, quoted values,
// escapes \n \t \b \\ \" and line continuation. Input git would reject is
// an error, so the caller can fail closed.
func parseGitConfig(data []byte) ([]gitConfigEntry, error) {
	p := &gitConfigParser{data: data, line: 1}
	if len(data) > 0 && data[0] == 0xEF {
		if !bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
			return nil, p.errorf("partial byte order mark")
		}
		p.pos = 3
	}
	var entries []gitConfigEntry
	base := "" // "section." or "section.sub." once a header was read
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return entries, nil
			}
			comment = false
		case comment || gitIsSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			name, err := p.section()
			if err != nil {
				return nil, err
			}
			base = name + "."
		case gitIsAlpha(c):
			e, err := p.entry(base, c)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		default:
			return nil, p.errorf("unexpected character %q", c)
		}
	}
}

// gitConfigParser reads bytes the way git's get_next_char does: CRLF is
// one '\n', and the end of input reads as '\n' with eof set.
type gitConfigParser struct {
	data []byte
	pos  int
	line int
	eof  bool
}

func (p *gitConfigParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		c = '\n'
	}
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *gitConfigParser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// section reads a header after its '[' (get_base_var).
func (p *gitConfigParser) section() (string, error) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return "", p.errorf("unterminated section header")
		case c == ']':
			if len(name) == 0 {
				return "", p.errorf("empty section name")
			}
			return string(name), nil
		case gitIsSpace(c):
			return p.subsection(name, c)
		case !gitIsKeyChar(c) && c != '.':
			return "", p.errorf("invalid character %q in section name", c)
		}
		name = append(name, gitLower(c))
	}
}

// subsection reads ` "sub"]` after a section name (get_extended_base_var);
// c is the blank that ended the name.
func (p *gitConfigParser) subsection(name []byte, c byte) (string, error) {
	for {
		if c == '\n' {
			return "", p.errorf("unterminated section header")
		}
		c = p.next()
		if !gitIsSpace(c) {
			break
		}
	}
	if c != '"' {
		return "", p.errorf(`expected '"' to start a subsection name`)
	}
	name = append(name, '.')
	for {
		c = p.next()
		if c == '\n' {
			return "", p.errorf("unterminated subsection name")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return "", p.errorf("unterminated subsection name")
			}
		}
		if c == 0 {
			// git keeps the byte, and its C string of the variable
			// name then ends there: [diff "x.textconv\0"] y = z is
			// diff.x.textconv to git. Refuse rather than mimic.
			return "", p.errorf("NUL byte in a subsection name")
		}
		name = append(name, c)
	}
	if p.next() != ']' {
		return "", p.errorf(`expected ']' after a subsection name`)
	}
	return string(name), nil
}

// entry reads a variable whose first letter is c (get_value).
func (p *gitConfigParser) entry(base string, c byte) (gitConfigEntry, error) {
	e := gitConfigEntry{Line: p.line}
	name := append([]byte(base), gitLower(c))
	for {
		c = p.next()
		if p.eof || !gitIsKeyChar(c) {
			break
		}
		name = append(name, gitLower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e.Name = string(name)
	if c == '\n' {
		return e, nil
	}
	if c != '=' {
		return e, p.errorf("expected '=' after %s", gitSanitize(e.Name))
	}
	v, err := p.value()
	if err != nil {
		return e, err
	}
	e.Value, e.HasValue = v, true
	return e, nil
}

// value reads a value after its '=' (parse_value): blanks outside quotes
// are trimmed at both ends and each inner one becomes a space.
func (p *gitConfigParser) value() (string, error) {
	var v []byte
	quote, comment, spaces := false, false, 0
	for {
		c := p.next()
		switch {
		case c == '\n':
			if quote {
				return "", p.errorf("unterminated quoted value")
			}
			return string(v), nil
		case comment:
			continue
		case gitIsSpace(c) && !quote:
			if len(v) > 0 {
				spaces++
			}
			continue
		case !quote && (c == ';' || c == '#'):
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue // line continuation
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", p.errorf("invalid escape sequence \\%c", c)
			}
			v = append(v, c)
		case '"':
			quote = !quote
		default:
			v = append(v, c)
		}
	}
}

// git's own character classes (sane_ctype), not the locale's.
func gitIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func gitIsAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func gitIsKeyChar(c byte) bool {
	return gitIsAlpha(c) || c >= '0' && c <= '9' || c == '-'
}
func gitLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
