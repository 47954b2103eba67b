package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitO200k cuts s into the pieces o200k_base's pre-tokenizer pattern
// cuts it into, calling yield for each, in order:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// The library matches that pattern with a backtracking engine, which is
// most of its counting time; this is the same leftmost-first matching,
// written out. s must be valid UTF-8 (the library reads invalid bytes as
// U+FFFD; Count converts them first, runes.go). TestSplitO200kMatchesTheLibrary
// compares the two piece by piece.
func splitO200k(s string, yield func(piece string)) { splitBy(s, nextO200k, yield) }

// splitBy cuts s into the pieces next ends, one after another. Every
// character is matched by some alternative of either pattern (the last two
// take any whitespace, the fourth anything else that is not a letter or
// number); a single character is the defensive floor.
func splitBy(s string, next func(s string, i int) int, yield func(piece string)) {
	for i := 0; i < len(s); {
		n := next(s, i)
		if n <= i {
			_, w := utf8.DecodeRuneInString(s[i:])
			n = i + w
		}
		yield(s[i:n])
		i = n
	}
}

// nextO200k returns the end of the piece of s that starts at i < len(s):
// decided on the bytes when they are ASCII (split_o200k_ascii.go), by the
// pattern's alternatives in order otherwise.
func nextO200k(s string, i int) int {
	if n := asciiPiece(s, i); n >= i {
		return n
	}
	return matchO200k(s, i)
}

// o200kAlternatives are the pattern's alternatives, in order.
var o200kAlternatives = []func(s string, i int) int{
	func(s string, i int) int { return matchLetters(s, i, true) },
	func(s string, i int) int { return matchLetters(s, i, false) },
	matchDigits, matchPunct, matchNewlines, matchSpaceNotBeforeText, matchSpaces,
}

// matchO200k returns the end of the match starting at i, or i when there
// is none.
func matchO200k(s string, i int) int { return firstMatch(o200kAlternatives, s, i) }

// firstMatch returns the end of the first of alternatives that matches a
// non-empty piece at i (leftmost-first, as the engine tries them), or i.
func firstMatch(alternatives []func(s string, i int) int, s string, i int) int {
	for _, match := range alternatives {
		if e := match(s, i); e > i {
			return e
		}
	}
	return i
}

// runWhile returns the end of the maximal run of characters at k that in
// takes.
func runWhile(s string, k int, in func(rune) bool) int {
	for {
		r, w := at(s, k)
		if r < 0 || !in(r) {
			return k
		}
		k += w
	}
}

func at(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// The classes of ASCII characters, so that most text needs no Unicode
// table: bit flags per byte.
const (
	asciiL     = 1 << iota // \p{L}
	asciiN                 // \p{N}
	asciiUpper             // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	asciiLower             // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	asciiSpace             // \s
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z':
			t[c] = asciiL | asciiLower
		case 'A' <= c && c <= 'Z':
			t[c] = asciiL | asciiUpper
		case '0' <= c && c <= '9':
			t[c] = asciiN
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			t[c] = asciiSpace
		}
	}
	return t
}()

func isL(r rune) bool {
	if 0 <= r && r < utf8.RuneSelf {
		return asciiClass[r]&asciiL != 0
	}
	return r >= 0 && unicode.IsLetter(r)
}

func isN(r rune) bool {
	if 0 <= r && r < utf8.RuneSelf {
		return asciiClass[r]&asciiN != 0
	}
	return r >= 0 && unicode.IsNumber(r)
}

func isM(r rune) bool { return r >= utf8.RuneSelf && unicode.IsMark(r) }

// isUpperClass is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpperClass(r rune) bool {
	if 0 <= r && r < utf8.RuneSelf {
		return asciiClass[r]&asciiUpper != 0
	}
	return r >= 0 && (unicode.IsUpper(r) || unicode.IsTitle(r) || unicode.In(r, unicode.Lm, unicode.Lo) || isM(r))
}

// isLowerClass is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLowerClass(r rune) bool {
	if 0 <= r && r < utf8.RuneSelf {
		return asciiClass[r]&asciiLower != 0
	}
	return r >= 0 && (unicode.IsLower(r) || unicode.In(r, unicode.Lm, unicode.Lo) || isM(r))
}

// isSpace is the engine's \s: [\f\n\r\t\v\x85\p{Z}].
func isSpace(r rune) bool {
	if 0 <= r && r < utf8.RuneSelf {
		return asciiClass[r]&asciiSpace != 0
	}
	return r == 0x85 || (r >= 0 && unicode.Is(unicode.Z, r))
}

// isPrefix is [^\r\n\p{L}\p{N}]. It takes U+007F (DEL), as OpenAI's
// pattern does (TestDeleteIsASymbol).
func isPrefix(r rune) bool { return r >= 0 && r != '\r' && r != '\n' && !isL(r) && !isN(r) }

// matchLetters matches the first alternative (upperFirst false: a run of
// upper-class characters, then at least one lower-class one) or the
// second (upperFirst true... see below), each with its optional prefix and
// contraction. first selects the first alternative.
func matchLetters(s string, i int, first bool) int {
	try := func(j int) int {
		var e int
		if first {
			e = upperThenLower(s, j)
		} else {
			e = upperPlusLowerStar(s, j)
		}
		if e < 0 {
			return -1
		}
		return contraction(s, e)
	}
	if r, w := at(s, i); isPrefix(r) {
		if e := try(i + w); e >= 0 {
			return e
		}
	}
	if e := try(i); e >= 0 {
		return e
	}
	return -1
}

// upperThenLower matches [UC]*[LC]+ at j (greedy, with the engine's
// backtracking) and returns its end, or -1.
func upperThenLower(s string, j int) int {
	// The maximal run of upper-class characters, remembering where each
	// starts.
	var starts []int
	k := j
	for {
		r, w := at(s, k)
		if !isUpperClass(r) {
			break
		}
		starts = append(starts, k)
		k += w
	}
	// With the whole run taken, a lower-class character must follow.
	if r, _ := at(s, k); isLowerClass(r) {
		for {
			r, w := at(s, k)
			if !isLowerClass(r) {
				return k
			}
			k += w
		}
	}
	// Otherwise the run gives characters back until one it gave back is
	// lower-class: that one is the whole [LC]+ (the characters after it in
	// the run are not lower-class, and the one after the run is not).
	for n := len(starts) - 1; n >= 0; n-- {
		r, w := at(s, starts[n])
		if isLowerClass(r) {
			return starts[n] + w
		}
	}
	return -1
}

// upperPlusLowerStar matches [UC]+[LC]* at j and returns its end, or -1.
func upperPlusLowerStar(s string, j int) int {
	k := j
	for {
		r, w := at(s, k)
		if !isUpperClass(r) {
			break
		}
		k += w
	}
	if k == j {
		return -1
	}
	for {
		r, w := at(s, k)
		if !isLowerClass(r) {
			return k
		}
		k += w
	}
}

// contraction extends e over (?i:'s|'t|'re|'ve|'m|'ll|'d), tried in that
// order. The engine's case-insensitive s also matches ſ (U+017F, whose
// upper case is S); no other letter of these has a non-ASCII match.
func contraction(s string, e int) int {
	if e >= len(s) || s[e] != '\'' {
		return e
	}
	lower := func(k int) byte {
		if k >= len(s) {
			return 0
		}
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c
	}
	switch c := lower(e + 1); c {
	case 's', 't', 'm', 'd':
		return e + 2
	case 'r', 'v':
		if lower(e+2) == 'e' {
			return e + 3
		}
	case 'l':
		if lower(e+2) == 'l' {
			return e + 3
		}
	case longS[0]:
		// Only ſ's first byte: the ASCII cases above stay one switch.
		if strings.HasPrefix(s[e+1:], longS) {
			return e + 1 + len(longS)
		}
	}
	return e
}

// longS is U+017F, the one non-ASCII letter a contraction takes.
const longS = "ſ"

// matchDigits matches \p{N}{1,3}.
func matchDigits(s string, i int) int {
	k := i
	for n := 0; n < 3; n++ {
		r, w := at(s, k)
		if !isN(r) {
			break
		}
		k += w
	}
	if k == i {
		return -1
	}
	return k
}

// matchPunct matches " ?[^\s\p{L}\p{N}]+[\r\n/]*".
func matchPunct(s string, i int) int { return matchPunctThen(s, i, true) }

// matchPunctThen matches " ?[^\s\p{L}\p{N}]+" followed by any run of
// \r and \n, and of / too when slash: the two encodings' patterns differ
// only there.
func matchPunctThen(s string, i int, slash bool) int {
	run := func(j int) int {
		k := runWhile(s, j, isSymbol)
		if k == j {
			return -1
		}
		for k < len(s) && (s[k] == '\r' || s[k] == '\n' || (slash && s[k] == '/')) {
			k++
		}
		return k
	}
	if i < len(s) && s[i] == ' ' {
		if e := run(i + 1); e >= 0 {
			return e
		}
	}
	return run(i)
}

// isSymbol is [^\s\p{L}\p{N}].
func isSymbol(r rune) bool { return !isSpace(r) && !isL(r) && !isN(r) }

// spaceRun returns the end of the maximal run of whitespace at i.
func spaceRun(s string, i int) int { return runWhile(s, i, isSpace) }

// matchNewlines matches \s*[\r\n]+ as the library's engine does: the
// whitespace before the run's first \r or \n, then every \r and \n that
// follows it at once (the engine does not give back newlines it took, so
// "\n\n  \n" is two pieces, "\n\n" and "  \n").
func matchNewlines(s string, i int) int {
	end := spaceRun(s, i)
	for k := i; k < end; k++ {
		if s[k] == '\r' || s[k] == '\n' {
			for k < end && (s[k] == '\r' || s[k] == '\n') {
				k++
			}
			return k
		}
	}
	return -1
}

// matchSpaceNotBeforeText matches \s+(?!\S): the whitespace run, less its
// last character when text follows it.
func matchSpaceNotBeforeText(s string, i int) int {
	end := spaceRun(s, i)
	if end == i {
		return -1
	}
	if end == len(s) {
		return end
	}
	_, w := utf8.DecodeLastRuneInString(s[i:end])
	if end-w > i {
		return end - w
	}
	return -1
}

// matchSpaces matches \s+.
func matchSpaces(s string, i int) int {
	if end := spaceRun(s, i); end > i {
		return end
	}
	return -1
}
