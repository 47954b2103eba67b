package redact

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// matcher replaces exact values with markers. At each position the
// leftmost occurrence of any value wins; among values starting at the same
// position the one earlier in vals (the longest, by construction) wins.
// Matches never overlap, so the output holds no value that lay wholly
// inside an unreplaced stretch of the input.
//
// The search is one pass of Wu–Manber over the text, whatever the number
// of values: every value is at least win bytes long, and a window of win
// bytes can hold the start of a value only if its last three bytes occur
// at the same distance from the start in some value. shift holds, for the
// hash of every three-byte block, how far the window may move before that
// can be true; on ordinary text with a few hundred long values it moves
// win−2 bytes at a time and looks at almost nothing else. The table has
// about eight slots per block of the values, so it stays sparse and is
// cheap to build for a few. Values shorter than four bytes make win too
// small for blocks, and then every position is tried through byFirst, the
// values grouped by first byte.
type matcher struct {
	vals   []string
	marks  []string
	maxLen int

	win       int         // min(shortest value, maxWindow)
	shift     []uint8     // block hash → distance to the nearest candidate end; nil below blockWindow
	hashShift uint32      // 32 − log2(len(shift))
	endHash   []uint32    // hashes of the values' last window blocks, sorted
	endVal    []int       // endVal[i]: the value whose last block hashed to endHash[i], in vals order among equals
	byFirst   *[256][]int // first byte → values, in vals order (short windows only)
}

const (
	blockLen    = 3  // bytes per Wu–Manber block
	blockWindow = 4  // the shortest window that uses blocks
	maxWindow   = 64 // longer windows fill the table without moving faster
	minBits     = 8  // smallest shift table: 256 slots
	maxBits     = 16 // largest: 64 KiB
)

// newMatcher builds a matcher from value → marker pairs, longest value
// first, ties broken by value so the order is deterministic.
func newMatcher(pairs map[string]string) *matcher {
	keys := make([]string, 0, len(pairs))
	for v := range pairs {
		if v != "" {
			keys = append(keys, v)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	marks := make([]string, len(keys))
	for i, k := range keys {
		marks[i] = pairs[k]
	}
	return buildMatcher(keys, marks)
}

// buildMatcher indexes vals, which must be non-empty, distinct and sorted
// longest first, each replaced by the mark of the same index.
func buildMatcher(vals, marks []string) *matcher {
	m := &matcher{vals: vals, marks: marks}
	if len(vals) == 0 {
		return m
	}
	m.maxLen = len(vals[0])
	m.win = min(len(vals[len(vals)-1]), maxWindow)
	if m.win < blockWindow {
		m.byFirst = new([256][]int)
		for i, v := range vals {
			m.byFirst[v[0]] = append(m.byFirst[v[0]], i)
		}
		return m
	}
	blocks := len(vals) * (m.win - blockLen + 1)
	tb := min(max(bits.Len(uint(blocks)*8), minBits), maxBits)
	m.shift = make([]uint8, 1<<tb)
	m.hashShift = uint32(32 - tb)
	full := uint8(m.win - blockLen + 1)
	for i := range m.shift {
		m.shift[i] = full
	}
	type end struct {
		h uint32
		v int
	}
	ends := make([]end, len(vals))
	for i, v := range vals {
		// Blocks of the window v[:win]: the one ending at offset e may
		// be the window's last block after a move of win-1-e.
		for e := blockLen - 1; e < m.win; e++ {
			h := m.hash(v[e-2 : e+1])
			m.shift[h] = min(m.shift[h], uint8(m.win-1-e))
		}
		ends[i] = end{h: m.hash(v[m.win-3 : m.win]), v: i}
	}
	slices.SortStableFunc(ends, func(a, b end) int { return cmp.Compare(a.h, b.h) })
	m.endHash, m.endVal = make([]uint32, len(ends)), make([]int, len(ends))
	for i, e := range ends {
		m.endHash[i], m.endVal[i] = e.h, e.v
	}
	return m
}

// hash returns the shift-table slot of a three-byte block.
func (m *matcher) hash(blk string) uint32 {
	return (uint32(blk[0])<<8 | uint32(blk[1])<<16 | uint32(blk[2])<<24) * 2654435761 >> m.hashShift
}

// endsWith returns the values whose last window block hashes to h, in
// vals order.
func (m *matcher) endsWith(h uint32) []int {
	i, _ := slices.BinarySearch(m.endHash, h)
	j := i
	for j < len(m.endHash) && m.endHash[j] == h {
		j++
	}
	return m.endVal[i:j]
}

// withMarks returns a matcher for the same values with other marks; the
// index is shared, not rebuilt.
func (m *matcher) withMarks(marks []string) *matcher {
	c := *m
	c.marks = marks
	return &c
}

// text is what the matcher searches: a string or a byte slice, without
// conversion.
type text interface{ ~string | ~[]byte }

// find returns the first match that starts in s[from:limit] and lies
// wholly inside s: its start and the index of its value; ok is false when
// there is none.
func find[T text](m *matcher, s T, from, limit int) (p, k int, ok bool) {
	if len(m.vals) == 0 {
		return 0, 0, false
	}
	limit = min(limit, len(s)-m.win+1)
	if m.shift == nil {
		for p := from; p < limit; p++ {
			if k := longestAt(m, s, p, (*m.byFirst)[s[p]]); k >= 0 {
				return p, k, true
			}
		}
		return 0, 0, false
	}
	if limit-from >= fourCursorsMin {
		return findFour(m, s, from, limit)
	}
	return findTwo(m, s, from, limit)
}

// findTwo is find with blocks over [from, limit), limit already bounded.
func findTwo[T text](m *matcher, s T, from, limit int) (p, k int, ok bool) {
	// Two cursors, over the first and the second half of the starts. Each
	// step is a chain of dependent loads; two chains that do not depend
	// on each other run side by side in the processor, nearly twice as
	// fast. A match in the first half wins over one in the second.
	mid := from + (limit-from)/2
	a, b := from, mid
	for {
		a, b = skipBoth(m, s, a, mid, b, limit)
		if a >= mid {
			return findBlocks(m, s, b, limit)
		}
		if b >= limit {
			return findBlocks(m, s, a, mid)
		}
		if m.shift[blockAt(m, s, a)] == 0 {
			if k := startsAt(m, s, a); k >= 0 {
				return a, k, true
			}
			a++
			continue
		}
		// b stopped on a block without a move.
		if k := startsAt(m, s, b); k >= 0 {
			if p, k, ok := findBlocks(m, s, a, mid); ok {
				return p, k, true
			}
			return b, k, true
		}
		b++
	}
}

// fourCursorsMin is the stretch of starts from which find runs four
// cursors: below it, what the chains gain does not pay for setting up.
const fourCursorsMin = 4 << 10

// findFour is find over a long stretch [from, limit), limit already
// bounded, with four cursors, one per quarter, moving side by side: twice
// the independent chains of findTwo, about 1.6 times as fast over text
// without a value. Each cursor meets the starts of its quarter in order,
// so the first match it confirms is its quarter's first. As soon as one
// quarter is settled (its first match found, or its end reached without
// one) the quarters are finished in order, each from where its cursor
// stands, by findTwo: the first match of the earliest quarter that has
// one is the first match of all.
func findFour[T text](m *matcher, s T, from, limit int) (p, k int, ok bool) {
	q := (limit - from) / 4
	end := [4]int{from + q, from + 2*q, from + 3*q, limit}
	cur := [4]int{from, end[0], end[1], end[2]}
	found, at := -1, [4]int{}
	for settled := false; !settled; {
		cur[0], cur[1], cur[2], cur[3] = skipFour(m, s, cur, end)
		for i := range cur {
			if cur[i] >= end[i] {
				settled = true
				continue
			}
			if m.shift[blockAt(m, s, cur[i])] != 0 {
				continue // this cursor did not stop
			}
			if k := startsAt(m, s, cur[i]); k >= 0 {
				if found < 0 || i < found {
					found, at[i] = i, k
				}
				settled = true
				continue
			}
			cur[i]++
		}
	}
	for i := range cur {
		if i == found {
			return cur[i], at[i], true
		}
		if cur[i] >= end[i] {
			continue
		}
		if p, k, ok := findTwo(m, s, cur[i], end[i]); ok {
			return p, k, true
		}
	}
	return 0, 0, false
}

// skipFour is skipBoth for four cursors: it moves cur[i] (before end[i])
// until one of them stops on a block without a move or leaves its
// stretch.
func skipFour[T text](m *matcher, s T, cur, end [4]int) (int, int, int, int) {
	shift, w, hs := m.shift, m.win, m.hashShift
	a, b, c, d := cur[0], cur[1], cur[2], cur[3]
	for a < end[0] && b < end[1] && c < end[2] && d < end[3] {
		ba, bb, bc, bd := s[a+w-4:a+w], s[b+w-4:b+w], s[c+w-4:c+w], s[d+w-4:d+w]
		sa := shift[(uint32(ba[0])|uint32(ba[1])<<8|uint32(ba[2])<<16|uint32(ba[3])<<24)&^0xff*2654435761>>hs]
		sb := shift[(uint32(bb[0])|uint32(bb[1])<<8|uint32(bb[2])<<16|uint32(bb[3])<<24)&^0xff*2654435761>>hs]
		sc := shift[(uint32(bc[0])|uint32(bc[1])<<8|uint32(bc[2])<<16|uint32(bc[3])<<24)&^0xff*2654435761>>hs]
		sd := shift[(uint32(bd[0])|uint32(bd[1])<<8|uint32(bd[2])<<16|uint32(bd[3])<<24)&^0xff*2654435761>>hs]
		if sa == 0 || sb == 0 || sc == 0 || sd == 0 {
			break
		}
		a += int(sa)
		b += int(sb)
		c += int(sc)
		d += int(sd)
	}
	return a, b, c, d
}

// findBlocks is find over the starts [from, limit) with one cursor, for
// windows of at least blockWindow bytes.
func findBlocks[T text](m *matcher, s T, from, limit int) (p, k int, ok bool) {
	shift, w, hs := m.shift, m.win, m.hashShift
	for p := from; p < limit; {
		blk := s[p+w-4 : p+w]
		h := (uint32(blk[0]) | uint32(blk[1])<<8 | uint32(blk[2])<<16 | uint32(blk[3])<<24) &^ 0xff * 2654435761 >> hs
		if sh := shift[h]; sh != 0 {
			p += int(sh)
			continue
		}
		if k := longestAt(m, s, p, m.endsWith(h)); k >= 0 {
			return p, k, true
		}
		p++
	}
	return 0, 0, false
}

// skipBoth moves the starts a (before endA) and b (before endB) along
// together until either stops on a block without a move or leaves its
// stretch. Blocks are read as four bytes ending with the block (one load;
// win ≥ 4) with the first byte masked off, which hashes as hash does.
func skipBoth[T text](m *matcher, s T, a, endA, b, endB int) (int, int) {
	shift, w, hs := m.shift, m.win, m.hashShift
	for a < endA && b < endB {
		ba, bb := s[a+w-4:a+w], s[b+w-4:b+w]
		sa := shift[(uint32(ba[0])|uint32(ba[1])<<8|uint32(ba[2])<<16|uint32(ba[3])<<24)&^0xff*2654435761>>hs]
		sb := shift[(uint32(bb[0])|uint32(bb[1])<<8|uint32(bb[2])<<16|uint32(bb[3])<<24)&^0xff*2654435761>>hs]
		if sa == 0 || sb == 0 {
			return a, b
		}
		a += int(sa)
		b += int(sb)
	}
	return a, b
}

// blockAt is the shift-table slot of the last block of the window that
// starts at p.
func blockAt[T text](m *matcher, s T, p int) uint32 {
	blk := s[p+m.win-3 : p+m.win]
	return (uint32(blk[0])<<8 | uint32(blk[1])<<16 | uint32(blk[2])<<24) * 2654435761 >> m.hashShift
}

// startsAt returns the longest value that occurs at s[p:] among those
// whose window ends with the block of the window at p, or -1.
func startsAt[T text](m *matcher, s T, p int) int {
	return longestAt(m, s, p, m.endsWith(blockAt(m, s, p)))
}

// longestAt returns the first of cands (the longest, since cands keep vals
// order) whose value occurs at s[p:], or -1.
func longestAt[T text](m *matcher, s T, p int, cands []int) int {
	for _, k := range cands {
		v := m.vals[k]
		if p+len(v) <= len(s) && string(s[p:p+len(v)]) == v {
			return k
		}
	}
	return -1
}

// replaceString returns s with every match replaced; s itself when there
// is none, without allocating.
func (m *matcher) replaceString(s string) string {
	if len(m.vals) == 0 {
		return s
	}
	p, k, ok := find(m, s, 0, len(s))
	if !ok {
		return s
	}
	out, _ := scanFrom(m, make([]byte, 0, len(s)+len(m.marks[k])), s, len(s), p, k, ok)
	return string(out)
}

// scanFrom appends s to dst with matches replaced, deciding only matches
// that start before limit, given the first of them (find from the start).
// It returns the extended dst and the offset where it stopped: everything
// before that offset is final, the rest (shorter than the longest value
// when limit = len(s)−maxLen+1) must wait for more input. A match that
// starts before limit lies wholly inside s, so every decision made here
// is the one a scan of the complete input would make.
func scanFrom[T text](m *matcher, dst []byte, s T, limit, p, k int, ok bool) ([]byte, int) {
	cur := 0
	for ok {
		dst = append(dst, s[cur:p]...)
		dst = append(dst, m.marks[k]...)
		cur = p + len(m.vals[k])
		p, k, ok = find(m, s, cur, limit)
	}
	end := max(limit, cur)
	return append(dst, s[cur:end]...), end
}
