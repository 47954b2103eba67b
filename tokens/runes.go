package tokens

import (
	"strings"
	"unicode/utf8"
)

// asRunes returns s as the library's pattern engine reads it, converted
// to runes: every byte that does not start a valid UTF-8 sequence becomes
// U+FFFD. The library counts the pieces of that text (its "bytes
// unchanged" mode never reaches the merge with invalid bytes), so an
// exact count must too. Valid text is returned as is.
func asRunes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}
