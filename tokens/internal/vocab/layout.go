package vocab

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A vocabulary file is three tables back to back:
//
//   - tokens: every token's bytes, concatenated in rank order;
//   - offsets: Len()+1 little-endian uint32, token r spanning
//     tokens[offsets[r]:offsets[r+1]];
//   - table: 2^k little-endian uint32 slots, k the least giving at least
//     twice as many slots as tokens (so that a lookup that misses, the
//     common case of a merge, ends after a slot or two). A slot is 0 when
//     empty, else rank+1 in its low rankBits bits and bits rankBits..31 of
//     the token's hash (its tag) above them. A token sits in the first
//     empty slot at or after hash>>(64-k), wrapping around.
const (
	rankBits = 18
	rankMask = 1<<rankBits - 1
)

// Build lays out tokens, given in rank order, as a vocabulary file: it
// returns the file and where its tokens and offsets tables end.
func Build(tokens []string) (data []byte, tokensEnd, offsetsEnd int, err error) {
	if len(tokens) == 0 || len(tokens) >= rankMask {
		return nil, 0, 0, fmt.Errorf("%d tokens: a slot holds 1 to %d", len(tokens), rankMask-1)
	}
	seen := make(map[string]int, len(tokens))
	for r, t := range tokens {
		if prev, ok := seen[t]; ok {
			return nil, 0, 0, fmt.Errorf("ranks %d and %d are both %q", prev, r, t)
		}
		seen[t] = r
	}
	k := max(bits.Len(uint(2*len(tokens)-1)), 1)
	table := make([]uint32, 1<<k)
	mask := uint32(len(table) - 1)
	for r, t := range tokens {
		h := hash(t)
		i := uint32(h >> (64 - k))
		for table[i] != 0 {
			i = (i + 1) & mask
		}
		table[i] = uint32(h)&^rankMask | uint32(r+1)
	}

	for _, t := range tokens {
		data = append(data, t...)
	}
	tokensEnd = len(data)
	off := 0
	for _, t := range tokens {
		data = binary.LittleEndian.AppendUint32(data, uint32(off))
		off += len(t)
	}
	data = binary.LittleEndian.AppendUint32(data, uint32(off))
	offsetsEnd = len(data)
	for _, slot := range table {
		data = binary.LittleEndian.AppendUint32(data, slot)
	}
	return data, tokensEnd, offsetsEnd, nil
}
