package process

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference decodes the whole stream at once: every byte outside a valid
// sequence becomes U+FFFD, the tail is the last limit characters.
func reference(whole []byte, limit int) Stream {
	text := []rune(string(appendValid(nil, whole)))
	tail := text
	if len(tail) > limit {
		tail = tail[len(tail)-limit:]
	}
	return Stream{
		Tail: string(tail), TotalBytes: int64(len(whole)),
		TotalChars: int64(utf8.RuneCount(whole)), Truncated: len(text) > limit,
	}
}

func writeChunks(limit int, chunks [][]byte) Stream {
	t := newTailBuffer(limit)
	for _, c := range chunks {
		t.Write(c)
	}
	t.Flush()
	return t.stream()
}

func TestTailBuffer(t *testing.T) {
	euro := "\u20ac" // 3 bytes
	face := "\U0001F600"
	tests := []struct {
		name   string
		limit  int
		chunks []string
		want   Stream
	}{
		{name: "empty", limit: 5, chunks: nil, want: Stream{}},
		{name: "short ascii", limit: 5, chunks: []string{"ab", "c"}, want: Stream{Tail: "abc", TotalBytes: 3, TotalChars: 3}},
		{name: "exactly the limit", limit: 3, chunks: []string{"abc"}, want: Stream{Tail: "abc", TotalBytes: 3, TotalChars: 3}},
		{name: "truncated", limit: 3, chunks: []string{"abcdef"}, want: Stream{Tail: "def", TotalBytes: 6, TotalChars: 6, Truncated: true}},
		{name: "rune split across writes", limit: 2, chunks: []string{"a" + euro[:1], euro[1:2], euro[2:] + "b"},
			want: Stream{Tail: euro + "b", TotalBytes: 5, TotalChars: 3, Truncated: true}},
		{name: "4-byte rune split 1+3", limit: 10, chunks: []string{face[:1], face[1:]}, want: Stream{Tail: face, TotalBytes: 4, TotalChars: 1}},
		{name: "invalid bytes replaced one by one", limit: 10, chunks: []string{"a\xff\xfeb"},
			want: Stream{Tail: "a\ufffd\ufffdb", TotalBytes: 4, TotalChars: 4}},
		{name: "truncated sequence at the end", limit: 10, chunks: []string{"x" + euro[:2]},
			want: Stream{Tail: "x\ufffd\ufffd", TotalBytes: 3, TotalChars: 3}},
		{name: "incomplete sequence then ascii", limit: 10, chunks: []string{euro[:2], "z"},
			want: Stream{Tail: "\ufffd\ufffdz", TotalBytes: 3, TotalChars: 3}},
		{name: "stray continuation bytes", limit: 10, chunks: []string{"\x80\x80\x80\x80a"},
			want: Stream{Tail: "\ufffd\ufffd\ufffd\ufffda", TotalBytes: 5, TotalChars: 5}},
		{name: "literal replacement char kept", limit: 10, chunks: []string{"\ufffd"},
			want: Stream{Tail: "\ufffd", TotalBytes: 3, TotalChars: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chunks [][]byte
			for _, c := range tt.chunks {
				chunks = append(chunks, []byte(c))
			}
			if got := writeChunks(tt.limit, chunks); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTailBufferMatchesWholeDecoding writes random text, valid and not, in
// random chunks and compares with decoding the whole stream at once.
func TestTailBufferMatchesWholeDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bc", "\u00e9", "\u20ac", "\U0001F600", "\n", "\xff", "\x80", "\xe2\x82", "\xf0\x9f", "\xed\xa0\x80", "\xc0\xaf"}
	for iter := range 2000 {
		var sb strings.Builder
		n := rng.IntN(300)
		for range n {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		whole := []byte(sb.String())
		limit := 1 + rng.IntN(40)
		var chunks [][]byte
		for rest := whole; len(rest) > 0; {
			k := 1 + rng.IntN(min(len(rest), 1+rng.IntN(200)))
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		got, want := writeChunks(limit, chunks), reference(whole, limit)
		if got != want {
			t.Fatalf("iteration %d, limit %d, input %q in %d chunks:\ngot  %+v\nwant %+v", iter, limit, whole, len(chunks), got, want)
		}
	}
}

func TestTailBufferLargeStreamStaysBounded(t *testing.T) {
	tb := newTailBuffer(100)
	line := []byte(strings.Repeat("0123456789", 1000)) // 10 000 bytes
	for range 1000 {
		tb.Write(line)
	}
	tb.Flush()
	s := tb.stream()
	if s.TotalBytes != 10_000_000 || s.TotalChars != 10_000_000 || !s.Truncated {
		t.Fatalf("counters %+v", s)
	}
	if s.Tail != strings.Repeat("0123456789", 10) {
		t.Fatalf("tail %q", s.Tail)
	}
	if cap(tb.raw) > 4*tb.rawKeep {
		t.Fatalf("raw buffer grew to %d bytes for a %d-character tail", cap(tb.raw), tb.limit)
	}
}

func TestCountChars(t *testing.T) {
	for _, s := range []string{"", "abc", strings.Repeat("x", 17), strings.Repeat("x", 16) + "\u20ac" + "y", "\xff" + strings.Repeat("a", 9), "abcdefgh\x80"} {
		if got, want := countChars([]byte(s)), utf8.RuneCountInString(s); got != want {
			t.Errorf("countChars(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestCountCharsAgainstRuneCount: whatever the mix of ASCII, valid
// sequences, cut sequences and stray bytes, and wherever they fall against
// the 32- and 8-byte steps, the count is utf8.RuneCount's.
func TestCountCharsAgainstRuneCount(t *testing.T) {
	pieces := []string{"a", "0123456789abcdef0123456789abcdef", "\u00e9", "\u20ac", "\U0001F600", "\xe2\x82", "\xf0\x9f\x98", "\x80", "\xff", "\xc3", "\n"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b []byte
		for range r.IntN(40) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		if got, want := countChars(b), utf8.RuneCount(b); got != want {
			t.Fatalf("countChars(%q) = %d, want %d", b, got, want)
		}
	}
}

func TestChunkTextSplitsOnlyAtCharacters(t *testing.T) {
	whole := "a\u20acb\U0001F600\xffc"
	for split := 0; split <= len(whole); split++ {
		var c chunkText
		got := c.text([]byte(whole[:split]))
		if !utf8.ValidString(got) {
			t.Fatalf("split %d: first part %q is not valid UTF-8", split, got)
		}
		got += c.text([]byte(whole[split:])) + c.flush()
		if want := string(appendValid(nil, []byte(whole))); got != want {
			t.Fatalf("split %d: %q, want %q", split, got, want)
		}
	}
}
