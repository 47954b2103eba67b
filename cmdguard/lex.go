package cmdguard

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// word is one shell word after quote removal.
type word struct {
	text   string
	quoted bool // some part was quoted or escaped: no field splitting or brace expansion
	single bool // some part was single-quoted or $'...': no parameter expansion there
}

// redirect is one redirection operator and its target word.
type redirect struct {
	op     string
	target word
}

// simpleCommand is a run of words between control operators.
type simpleCommand struct {
	words     []word
	redirects []redirect
	sep       string // the operator before it: "", ";", "&&", "||", "|", "&", "\n", "(", ")"
}

// lexCommands cuts text into simple commands the way the shell would for
// the purpose of finding destructive commands. Unlike splitShell it models
// every control operator (||, &, newlines, subshell parentheses),
// redirections, $'...' and $"..." quoting, and it never fails: an
// unterminated quote runs to the end of the text. Substitutions stay
// verbatim inside their word; their bodies are examined separately.
// Comments are not special (a '#' hides nothing), and heredoc bodies are
// read as commands: both can only add findings.
func lexCommands(text string) []simpleCommand {
	l := lexer{s: text}
	l.run()
	return l.cmds
}

type lexer struct {
	s       string
	cmds    []simpleCommand
	cur     simpleCommand
	buf     strings.Builder
	inWord  bool
	quoted  bool
	single  bool
	pending string // redirection operator waiting for its target
	hasPend bool
}

func (l *lexer) endWord() {
	if !l.inWord {
		return
	}
	w := word{text: l.buf.String(), quoted: l.quoted, single: l.single}
	l.buf.Reset()
	l.inWord, l.quoted, l.single = false, false, false
	if l.hasPend {
		l.cur.redirects = append(l.cur.redirects, redirect{op: l.pending, target: w})
		l.hasPend = false
		return
	}
	l.cur.words = append(l.cur.words, w)
}

func (l *lexer) endCommand(sep string) {
	l.endWord()
	if l.hasPend {
		l.cur.redirects = append(l.cur.redirects, redirect{op: l.pending})
		l.hasPend = false
	}
	if len(l.cur.words) > 0 || len(l.cur.redirects) > 0 {
		l.cmds = append(l.cmds, l.cur)
	}
	l.cur = simpleCommand{sep: sep}
}

func (l *lexer) lit(s string) {
	l.buf.WriteString(s)
	l.inWord = true
}

func (l *lexer) run() {
	s := l.s
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case ' ', '\t':
			l.endWord()
			i++
		case '\n', '\r':
			l.endCommand("\n")
			i++
		case ';':
			l.endCommand(";")
			i++
		case '(', ')':
			l.endCommand(string(c))
			i++
		case '&':
			switch at(s, i+1) {
			case '&':
				l.endCommand("&&")
				i += 2
			case '>':
				l.endWord()
				if at(s, i+2) == '>' {
					i = l.redirect("&>>", i+3)
				} else {
					i = l.redirect("&>", i+2)
				}
			default:
				l.endCommand("&")
				i++
			}
		case '|':
			switch at(s, i+1) {
			case '|':
				l.endCommand("||")
				i += 2
			case '&':
				l.endCommand("|")
				i += 2
			default:
				l.endCommand("|")
				i++
			}
		case '<', '>':
			if at(s, i+1) == '(' {
				// Process substitution is a word.
				end, _ := parenEnd(s, i)
				l.lit(s[i:end])
				i = end
				continue
			}
			if l.inWord && !l.quoted && allDigits(l.buf.String()) {
				// An fd number: "2>" names no file.
				l.buf.Reset()
				l.inWord = false
			}
			l.endWord()
			op := redirectOp(s[i:])
			i = l.redirect(op, i+len(op))
		case '\\':
			if at(s, i+1) == '\n' {
				i += 2
				continue
			}
			if i+1 < len(s) {
				_, n := utf8.DecodeRuneInString(s[i+1:])
				l.lit(s[i+1 : i+1+n])
				i += 1 + n
			} else {
				i++
			}
			l.quoted = true
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				l.lit(s[i+1:])
				i = len(s)
			} else {
				l.lit(s[i+1 : i+1+end])
				i += end + 2
			}
			l.quoted, l.single = true, true
		case '"':
			i = l.doubleQuoted(i + 1)
		case '$':
			switch at(s, i+1) {
			case '\'':
				text, next := decodeANSIC(s, i+2)
				l.lit(text)
				l.quoted, l.single = true, true
				i = next
			case '"':
				i = l.doubleQuoted(i + 2)
			case '(':
				end, _ := parenEnd(s, i)
				l.lit(s[i:end])
				i = end
			case '{':
				end := braceEnd(s, i)
				l.lit(s[i:end])
				i = end
			default:
				l.lit("$")
				i++
			}
		case '`':
			end, _ := backtickEnd(s, i)
			l.lit(s[i:end])
			i = end
		default:
			l.buf.WriteByte(c)
			l.inWord = true
			i++
		}
	}
	l.endCommand("")
}

// redirect records op and makes the next word its target.
func (l *lexer) redirect(op string, next int) int {
	l.pending, l.hasPend = op, true
	return next
}

// doubleQuoted reads a double-quoted part starting after its opening quote
// and returns the index after its closing quote.
func (l *lexer) doubleQuoted(i int) int {
	s := l.s
	l.inWord, l.quoted = true, true
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\' && i+1 < len(s):
			switch s[i+1] {
			case '\n':
			case '$', '`', '"', '\\':
				l.buf.WriteByte(s[i+1])
			default:
				l.buf.WriteByte('\\')
				l.buf.WriteByte(s[i+1])
			}
			i += 2
		case c == '$' && at(s, i+1) == '(':
			end, _ := parenEnd(s, i)
			l.buf.WriteString(s[i:end])
			i = end
		case c == '$' && at(s, i+1) == '{':
			end := braceEnd(s, i)
			l.buf.WriteString(s[i:end])
			i = end
		case c == '`':
			end, _ := backtickEnd(s, i)
			l.buf.WriteString(s[i:end])
			i = end
		default:
			l.buf.WriteByte(c)
			i++
		}
	}
	return i
}

// redirectOp returns the redirection operator at the start of s (which
// begins with '<' or '>').
func redirectOp(s string) string {
	for _, op := range []string{"<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return s[:1]
}

// writesTarget reports whether a redirection operator writes its target.
func writesTarget(op string) bool {
	switch op {
	case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
		return true
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// braceEnd returns the index after the '}' closing the "${" at start, or
// len(s) when unterminated.
func braceEnd(s string, start int) int {
	depth := 0
	var quote byte
	for i := start + 1; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
			continue
		}
		switch c {
		case '\\':
			i++
		case '\'', '"':
			quote = c
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// decodeANSIC decodes the body of $'...' starting at i and returns the text
// and the index after the closing quote (len(s) when unterminated).
func decodeANSIC(s string, i int) (string, int) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		if c == '\'' {
			return b.String(), i + 1
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i < len(s) {
				b.WriteByte(s[i] & 0x1f)
				i++
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i
			for j < len(s) && j-i < max && isHex(s[j]) {
				j++
			}
			if j == i {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if n <= utf8.MaxRune {
				b.WriteRune(rune(n))
			}
			i = j
		default:
			if e >= '0' && e <= '7' {
				j := i - 1
				for j < len(s) && j-(i-1) < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i-1:j], 8, 16)
				b.WriteByte(byte(n))
				i = j
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), len(s)
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}
