package vocab

import "math/bits"

// The hash of token bytes places them in the table (layout.go): fixed,
// so that the generator and the lookup agree, and cheap on the short
// strings a merge looks up. It is wyhash's construction: the bytes are
// read as at most two 64-bit words per 16 bytes, each pair folded by a
// 128-bit multiply.
const (
	hashK0 = 0xa0761d6478bd642f
	hashK1 = 0xe7037ed1a0b428db
)

func hash(s string) uint64 {
	n := len(s)
	var a, b, seed uint64
	switch {
	case n == 0:
	case n < 4:
		a = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	case n <= 16:
		q := (n >> 3) << 2
		a = uint64(le32(s, 0))<<32 | uint64(le32(s, q))
		b = uint64(le32(s, n-4))<<32 | uint64(le32(s, n-4-q))
	default:
		i := 0
		for ; n-i > 16; i += 16 {
			seed = mix(le64(s, i)^hashK1, le64(s, i+8)^seed)
		}
		// The last 16 bytes, overlapping the last block when n is not a
		// multiple of 16.
		a, b = le64(s, n-16), le64(s, n-8)
	}
	return mix(hashK1^uint64(n), mix(a^hashK1, b^seed^hashK0))
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// le64 is the little-endian uint64 at s[i:i+8].
func le64(s string, i int) uint64 {
	return uint64(le32(s, i)) | uint64(le32(s, i+4))<<32
}
