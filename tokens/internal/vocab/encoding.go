package vocab

import "math/bits"

// Encoding is one vocabulary's static tables (layout.go): the token byte
// strings concatenated in rank order, their offsets, and an
// open-addressing hash table from token bytes to rank.
type Encoding struct {
	tokens  string // token bytes, rank order
	offsets string // (tokens+1) little-endian uint32: token r is tokens[offset(r):offset(r+1)]
	table   string // little-endian uint32 slots, a power of two of them
	shift   uint   // 64 - log2(slots): the hash's top bits pick the home slot
}

// newEncoding slices one embedded file into its tables.
func newEncoding(data string, tokensEnd, offsetsEnd int) Encoding {
	table := data[offsetsEnd:]
	return Encoding{
		tokens:  data[:tokensEnd],
		offsets: data[tokensEnd:offsetsEnd],
		table:   table,
		shift:   uint(64 - bits.TrailingZeros(uint(len(table)/4))),
	}
}

// Len is the number of tokens.
func (e Encoding) Len() int { return len(e.offsets)/4 - 1 }

// Token is the byte string of rank r (0 <= r < Len).
func (e Encoding) Token(r int) string {
	return e.tokens[le32(e.offsets, 4*r):le32(e.offsets, 4*r+4)]
}

// Rank returns the rank of the token whose bytes are b, if b is one.
func (e Encoding) Rank(b string) (uint32, bool) {
	h := hash(b)
	mask := uint32(len(e.table)/4 - 1)
	tag := uint32(h) &^ rankMask
	for i := uint32(h >> e.shift); ; i = (i + 1) & mask {
		slot := le32(e.table, int(4*i))
		if slot == 0 {
			return 0, false
		}
		// The tag (hash bits the slot keeps) rules out almost every
		// other token before its bytes are read.
		if slot&^rankMask == tag {
			r := int(slot&rankMask) - 1
			if e.tokens[le32(e.offsets, 4*r):le32(e.offsets, 4*r+4)] == b {
				return uint32(r), true
			}
		}
	}
}

// le32 is the little-endian uint32 at s[i:i+4].
func le32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
