package tokens

// splitCl100k cuts s into the pieces cl100k_base's pre-tokenizer pattern
// cuts it into, calling yield for each, in order:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// It is splitO200k's matching with the older pattern's alternatives (the
// character classes and the last three alternatives are o200k's). s must
// be valid UTF-8. TestSplitCl100kMatchesTheLibrary compares the two piece
// by piece.
func splitCl100k(s string, yield func(piece string)) { splitBy(s, matchCl100k, yield) }

// cl100kAlternatives are the pattern's alternatives, in order.
var cl100kAlternatives = []func(s string, i int) int{
	contraction, matchWord, matchDigits, matchPunctCl100k, matchNewlines, matchSpaceNotBeforeText, matchSpaces,
}

// matchCl100k returns the end of the match starting at i, or i when there
// is none.
func matchCl100k(s string, i int) int { return firstMatch(cl100kAlternatives, s, i) }

// matchWord matches [^\r\n\p{L}\p{N}]?\p{L}+: a prefix character not
// followed by a letter leaves nothing to match, since it is no letter
// itself.
func matchWord(s string, i int) int {
	j := i
	if r, w := at(s, i); isPrefix(r) {
		j += w
	}
	if k := runWhile(s, j, isL); k > j {
		return k
	}
	return -1
}

// matchPunctCl100k matches " ?[^\s\p{L}\p{N}]+[\r\n]*" (o200k's, without
// the slash among the trailing characters).
func matchPunctCl100k(s string, i int) int { return matchPunctThen(s, i, false) }
