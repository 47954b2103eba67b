package tokens

import "unicode/utf8"

// estimator approximates a modern BPE (≈ 100k–200k tokens) in one pass over
// the bytes: a run of ASCII letters costs one token per six letters begun,
// a run of digits one per three, each other ASCII symbol one (spaces before
// a word are part of it, other whitespace runs cost one), and each
// non-ASCII character one (CJK text is about a token a character, accented
// Latin less: the calibration corrects the rest).
type estimator struct{}

func (estimator) Name() string { return Estimate }
func (estimator) Exact() bool  { return false }

func (estimator) Count(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			_, size := utf8.DecodeRuneInString(s[i:])
			n++
			i += size
		case isLetter(c):
			j := i
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			n += (j - i + 5) / 6
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case c == ' ':
			// A single space joins the word after it.
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j-i > 1 || j == len(s) || !isLetter(s[j]) {
				n++
			}
			i = j
		case c == '\n' || c == '\r' || c == '\t':
			j := i
			for j < len(s) && (s[j] == '\n' || s[j] == '\r' || s[j] == '\t' || s[j] == ' ') {
				j++
			}
			n++
			i = j
		default:
			n++
			i++
		}
	}
	return n
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
