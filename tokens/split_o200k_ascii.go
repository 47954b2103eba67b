package tokens

import "unicode/utf8"

// The o200k pattern on ASCII text, where its classes are plain byte
// classes: upper-class and lower-class letters are disjoint (only
// non-ASCII letters and marks are in both), so the pattern's backtracking
// never changes where a piece ends. asciiPiece decides a piece from the
// bytes alone and gives up at the first non-ASCII byte it would have to
// classify, leaving that piece to matchO200k; prose and code are nearly all
// ASCII, and this is most of what counting a text costs once its pieces
// are known.

// Byte classes of the ASCII fast path.
const (
	bOther   = iota // not \s, \p{L} or \p{N}: punctuation, symbols, controls, DEL
	bLower          // a-z
	bUpper          // A-Z
	bDigit          // 0-9
	bSpace          // ' ', \t, \v, \f
	bNewline        // \r, \n
	bHigh           // a byte of a non-ASCII character: undecided
	bEnd            // past the end of the text
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = bHigh
		case 'a' <= c && c <= 'z':
			t[c] = bLower
		case 'A' <= c && c <= 'Z':
			t[c] = bUpper
		case '0' <= c && c <= '9':
			t[c] = bDigit
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			t[c] = bSpace
		case c == '\r' || c == '\n':
			t[c] = bNewline
		}
	}
	return t
}()

// class is the class of s[k], bEnd past the end.
func class(s string, k int) uint8 {
	if k < len(s) {
		return byteClass[s[k]]
	}
	return bEnd
}

// asciiPiece returns the end of the piece that starts at i, or -1 when it
// depends on a non-ASCII character.
func asciiPiece(s string, i int) int {
	switch c := byteClass[s[i]]; c {
	case bLower, bUpper:
		return asciiLetters(s, i)
	case bDigit:
		// \p{N}{1,3}
		k := i + 1
		for k < len(s) && k < i+3 && byteClass[s[k]] == bDigit {
			k++
		}
		if k < i+3 && class(s, k) == bHigh {
			return -1
		}
		return k
	case bNewline:
		// \s*[\r\n]+ from a newline: the run of \r and \n.
		k := i + 1
		for k < len(s) && byteClass[s[k]] == bNewline {
			k++
		}
		return k
	case bSpace, bOther:
		// [^\r\n\p{L}\p{N}] before letters is their prefix.
		switch class(s, i+1) {
		case bHigh:
			return -1
		case bLower, bUpper:
			return asciiLetters(s, i+1)
		case bOther:
			// " ?[^\s\p{L}\p{N}]+[\r\n/]*": the space is only taken
			// before punctuation.
			if c == bOther || s[i] == ' ' {
				return asciiPunct(s, i+1)
			}
		}
		if c == bOther {
			return asciiPunct(s, i+1)
		}
		return asciiSpaces(s, i)
	}
	return -1
}

// asciiLetters matches [UC]*[LC]+ or [UC]+[LC]* at j, then a contraction.
func asciiLetters(s string, j int) int {
	k := j
	for k < len(s) && byteClass[s[k]] == bUpper {
		k++
	}
	for k < len(s) && byteClass[s[k]] == bLower {
		k++
	}
	if class(s, k) == bHigh {
		return -1
	}
	return contraction(s, k)
}

// asciiPunct extends a run of [^\s\p{L}\p{N}] whose first byte is before
// k over the rest of it, then over [\r\n/]*.
func asciiPunct(s string, k int) int {
	for k < len(s) && byteClass[s[k]] == bOther {
		k++
	}
	if class(s, k) == bHigh {
		return -1
	}
	for k < len(s) && (s[k] == '\r' || s[k] == '\n' || s[k] == '/') {
		k++
	}
	return k
}

// asciiSpaces matches the whitespace alternatives at i, where s[i] is a
// space or tab: \s*[\r\n]+ (the whitespace before the run's first newline
// and the newlines that follow it), else \s+(?!\S) (the run less its last
// character when text follows), else \s+.
func asciiSpaces(s string, i int) int {
	k := i
	for k < len(s) && byteClass[s[k]] == bSpace {
		k++
	}
	switch class(s, k) {
	case bHigh:
		return -1 // U+0085, U+00A0, … are \s too
	case bNewline:
		k++
		for k < len(s) && byteClass[s[k]] == bNewline {
			k++
		}
		return k
	}
	if k == len(s) || k-i == 1 {
		return k
	}
	return k - 1
}
