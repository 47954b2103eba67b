package process

import (
	"encoding/binary"
	"unicode/utf8"
)

// The text of a stream is its bytes decoded as UTF-8 with every byte that
// is not part of a valid sequence replaced by U+FFFD, the way Go's
// "for range" over a string decodes. That rule is local: decoding may start
// at any byte that is not a continuation byte (10xxxxxx) and yields the same
// characters from there on as decoding from the start. The tail relies on
// it to decode only the end of each chunk.

// tailBuffer counts a stream and keeps its last limit characters. It keeps
// raw bytes and decodes them only when the Stream is built, so each write
// costs one counting pass and one copy of at most rawKeep bytes. Memory is
// bounded by 2·rawKeep whatever the stream's size. It is used by one
// goroutine at a time.
type tailBuffer struct {
	limit   int
	rawKeep int    // 4·limit+3: always holds the last limit characters
	raw     []byte // the last bytes of the stream, undecoded
	cut     bool   // raw no longer starts at the start of the stream

	carry  [utf8.UTFMax - 1]byte // an incomplete sequence at the end of the last write
	ncarry int

	totalBytes, totalChars int64
}

func newTailBuffer(limit int) *tailBuffer {
	return &tailBuffer{limit: limit, rawKeep: utf8.UTFMax*limit + utf8.UTFMax - 1}
}

// Write adds p to the stream. It never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.totalBytes += int64(n)
	p = t.completeCarry(p)
	if len(p) == 0 {
		return n, nil
	}
	k := incompleteSuffix(p)
	t.add(p[:len(p)-k])
	t.ncarry = copy(t.carry[:], p[len(p)-k:])
	return n, nil
}

// Flush ends the stream: a held incomplete sequence becomes one U+FFFD per
// byte.
func (t *tailBuffer) Flush() {
	if t.ncarry > 0 {
		t.add(t.carry[:t.ncarry])
		t.ncarry = 0
	}
}

// completeCarry decodes the held bytes together with the start of p and
// returns the rest of p.
func (t *tailBuffer) completeCarry(p []byte) []byte {
	for t.ncarry > 0 && len(p) > 0 {
		var tmp [2 * utf8.UTFMax]byte
		n := copy(tmp[:], t.carry[:t.ncarry])
		m := copy(tmp[n:], p[:min(len(p), utf8.UTFMax)])
		seq := tmp[:n+m]
		if !utf8.FullRune(seq) {
			// Still incomplete (fewer than 4 bytes in all): hold everything.
			t.ncarry = copy(t.carry[:], seq)
			return nil
		}
		_, size := utf8.DecodeRune(seq)
		t.add(seq[:size])
		if size > n {
			t.ncarry = 0
			return p[size-n:]
		}
		t.ncarry = copy(t.carry[:], t.carry[size:t.ncarry])
	}
	return p
}

// add appends complete text: body does not end inside a valid sequence.
func (t *tailBuffer) add(body []byte) {
	if len(body) == 0 {
		return
	}
	t.totalChars += int64(countChars(body))
	if len(body) >= t.rawKeep {
		t.raw = append(t.raw[:0], body[len(body)-t.rawKeep:]...)
		t.cut = true
		return
	}
	if len(t.raw)+len(body) > 2*t.rawKeep {
		drop := len(t.raw) + len(body) - t.rawKeep
		t.raw = t.raw[:copy(t.raw, t.raw[drop:])]
		t.cut = true
	}
	t.raw = append(t.raw, body...)
}

// stream returns the counters and the tail as a Stream.
func (t *tailBuffer) stream() Stream {
	raw := t.raw
	if t.cut {
		// raw may begin inside a sequence whose start was dropped: decode
		// from the first byte known to start a character.
		raw = raw[boundaryAfter(raw):]
	}
	text := appendValid(nil, raw)
	if off := offsetOfLast(text, t.limit); off > 0 {
		text = text[off:]
	}
	return Stream{
		Tail:       string(text),
		TotalBytes: t.totalBytes,
		TotalChars: t.totalChars,
		Truncated:  t.totalChars > int64(t.limit),
	}
}

// countChars returns utf8.RuneCount(b). ASCII is counted 32 bytes at a
// time (four independent loads per step, which the processor overlaps);
// only the stretches of non-ASCII bytes are decoded. Counting them apart
// gives the same total because a valid sequence holds no ASCII byte: an
// ASCII byte always starts a character, and a sequence cut short by one
// counts as one character per byte either way.
func countChars(b []byte) int {
	n := 0
	for len(b) > 0 {
		i := asciiPrefix(b)
		n += i
		b = b[i:]
		j := 0
		for j < len(b) && b[j] >= utf8.RuneSelf {
			j++
		}
		n += utf8.RuneCount(b[:j])
		b = b[j:]
	}
	return n
}

// asciiPrefix returns how many bytes at the start of b are ASCII.
func asciiPrefix(b []byte) int {
	const high = 0x8080808080808080
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		if (binary.LittleEndian.Uint64(w)|binary.LittleEndian.Uint64(w[8:])|
			binary.LittleEndian.Uint64(w[16:])|binary.LittleEndian.Uint64(w[24:]))&high != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:i+8])&high != 0 {
			break
		}
	}
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// boundaryAfter returns the first index of b, at most 3, that certainly
// starts a character whatever preceded b: a non-continuation byte, or the
// fourth byte after three continuation bytes (no valid sequence has more).
func boundaryAfter(b []byte) int {
	for j := 0; j < utf8.UTFMax-1 && j < len(b); j++ {
		if !isCont(b[j]) {
			return j
		}
	}
	return min(len(b), utf8.UTFMax-1)
}

// isCont reports whether c is a UTF-8 continuation byte.
func isCont(c byte) bool { return c&0xC0 == 0x80 }

// incompleteSuffix returns how many bytes at the end of b are the start of
// a valid sequence that the next bytes may complete (0 to 3).
func incompleteSuffix(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if !isCont(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// appendValid appends b to dst with each byte outside a valid sequence
// replaced by U+FFFD.
func appendValid(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}

// offsetOfLast returns the byte offset in valid UTF-8 b where its last n
// characters begin (0 when b holds n or fewer).
func offsetOfLast(b []byte, n int) int {
	for i := len(b) - 1; i >= 0; i-- {
		if !isCont(b[i]) {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return 0
}

// chunkText turns redacted chunks into text for Spec.OnChunk: split only at
// character boundaries, invalid bytes replaced as in the tail.
type chunkText struct {
	carry []byte
}

// text returns the complete characters of carry+p and holds back an
// incomplete sequence at the end.
func (c *chunkText) text(p []byte) string {
	data := p
	if len(c.carry) > 0 {
		data = append(c.carry, p...)
	}
	k := incompleteSuffix(data)
	out := string(appendValid(nil, data[:len(data)-k]))
	c.carry = append(c.carry[:0:0], data[len(data)-k:]...)
	return out
}

// flush returns what is held at the end of the stream.
func (c *chunkText) flush() string {
	out := string(appendValid(nil, c.carry))
	c.carry = nil
	return out
}
