package files

import (
	"regexp"
	"strings"
)

// maxPatternBytes bounds a search pattern.
const maxPatternBytes = 1024

// compileGlob compiles a shell pattern with the semantics of Python's
// fnmatch (POSIX, case-sensitive): "*" matches any run of characters,
// slashes included; "?" one character; "[seq]" and "[!seq]" a set; a "["
// without its "]" is literal. The regexp engine is linear-time, so no
// pattern can make matching slow.
func compileGlob(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`\A(?s:`)
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch c {
		case '*':
			for i < len(pattern) && pattern[i] == '*' {
				i++
			}
			b.WriteString(".*")
			continue
		case '?':
			b.WriteString(".")
		case '[':
			class, n := globClass(pattern[i:])
			if n == 0 {
				b.WriteString(`\[`)
				break
			}
			b.WriteString(class)
			i += n
			continue
		default:
			j := i
			for j < len(pattern) && !strings.ContainsRune("*?[", rune(pattern[j])) {
				j++
			}
			b.WriteString(regexp.QuoteMeta(pattern[i:j]))
			i = j
			continue
		}
		i++
	}
	b.WriteString(`)\z`)
	return regexp.Compile(b.String())
}

// globClass translates the set at the start of p ("[...]") to a regexp
// class and returns it with the bytes it used, or n=0 when p has no
// closing "]" (then "[" is literal).
func globClass(p string) (class string, n int) {
	j := 1
	if j < len(p) && p[j] == '!' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++ // a "]" first in the set is a member
	}
	end := strings.IndexByte(p[j:], ']')
	if end < 0 {
		return "", 0
	}
	end += j
	body := p[1:end]
	var b strings.Builder
	b.WriteByte('[')
	if strings.HasPrefix(body, "!") {
		b.WriteByte('^')
		body = body[1:]
	}
	for _, r := range body {
		switch {
		case r == '-':
			b.WriteByte('-')
		case r < 0x80 && !isAlnum(byte(r)):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(']')
	return b.String(), end + 1
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
