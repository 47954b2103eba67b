package tokens

import "unicode/utf8"

// asRunes returns s as the library's pattern engine reads it, converted
// to runes: every byte that does not start a valid UTF-8 sequence becomes
// U+FFFD. The library counts the pieces of that text (its "bytes
// unchanged" mode never reaches the merge with invalid bytes), so an
// exact count must too. Valid text is returned as is.
func asRunes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	// Go's conversion to runes is the engine's: one U+FFFD per invalid byte.
	return string([]rune(s))
}
