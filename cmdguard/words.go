package cmdguard

import (
	"errors"
	"strings"
)

var (
	errNoClosingQuote = errors.New("no closing quotation")
	errNoEscaped      = errors.New("no escaped character")
)

// posixSplit splits a segment into words the way POSIX shlex does (step
// 8): words are separated by space, tab, CR or LF; a backslash outside
// quotes takes the next character literally; single quotes are literal;
// inside double quotes a backslash escapes only '"' and '\'. Adjacent quoted
// and unquoted parts join into one word, and ” is an empty word. Nothing
// else is special: operators were cut by splitShell and expansions were
// judged by scanExpansions.
func posixSplit(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\\':
			if i+1 >= len(s) {
				return nil, errNoEscaped
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errNoClosingQuote
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += 1 + end
			inWord = true
		case '"':
			i++
			closed := false
			for ; i < len(s); i++ {
				d := s[i]
				if d == '"' {
					closed = true
					break
				}
				if d == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
					cur.WriteByte(s[i])
					continue
				}
				cur.WriteByte(d)
			}
			if !closed {
				return nil, errNoClosingQuote
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
