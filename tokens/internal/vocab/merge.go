package vocab

// noRank is the rank of a pair that is not a token.
const noRank = ^uint32(0)

// longPiece is the length from which Count merges with a heap
// (merge_long.go) rather than by scanning the parts for each merge, which
// costs O(n²) and is faster only on short pieces.
const longPiece = 96

// Count returns the number of tokens the byte-pair merge gives piece.
func (e Encoding) Count(piece string) int {
	switch n := len(piece); {
	case n == 0:
		return 0
	case n == 1:
		// Every byte is a token (the generator checks it).
		return 1
	case n >= longPiece:
		return e.countLong(piece)
	}
	if _, ok := e.Rank(piece); ok {
		return 1
	}
	return e.countShort(piece)
}

// countShort is tiktoken's merge: parts[i] is where part i starts and the
// rank of part i joined to part i+1; the last entry marks the end.
func (e Encoding) countShort(piece string) int {
	type part struct {
		start int32
		rank  uint32
	}
	var buf [longPiece + 1]part
	parts := buf[:len(piece)+1]
	for i := range parts {
		parts[i] = part{int32(i), noRank}
	}
	// pair is the rank of parts i to i+skip+1 joined.
	pair := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := e.Rank(piece[parts[i].start:parts[i+skip+2].start]); ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = pair(i, 0)
	}
	for len(parts) > 2 {
		best, at := noRank, 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if best == noRank {
			break
		}
		// Part at absorbs part at+1: the pairs at it and before it
		// change.
		parts[at].rank = pair(at, 1)
		if at > 0 {
			parts[at-1].rank = pair(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}
