package vocab

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// library is an encoding with its library codec and pre-tokenizer
// pattern (as codec.NewO200kBase and codec.NewCl100kBase compile them).
type library struct {
	name    string
	enc     Encoding
	codec   *codec.Codec
	pattern *regexp2.Regexp
}

func libraries() []library {
	return []library{
		{"o200k_base", O200k(), codec.NewO200kBase(), regexp2.MustCompile(`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None)},
		{"cl100k_base", Cl100k(), codec.NewCl100kBase(), regexp2.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None)},
	}
}

// pieces cuts s where the library's pattern cuts it.
func (l library) pieces(t testing.TB, s string) []string {
	var out []string
	m, err := l.pattern.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = l.pattern.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every rank holds the library's token, and the table finds it.
func TestTheTablesHoldTheLibrarysTokens(t *testing.T) {
	for _, l := range libraries() {
		if l.enc.Len() < 100000 {
			t.Fatalf("%s: %d tokens", l.name, l.enc.Len())
		}
		for r := range l.enc.Len() {
			tok := l.enc.Token(r)
			want, err := l.codec.Decode([]uint{uint(r)})
			if err != nil || tok != want {
				t.Fatalf("%s: rank %d is %q, the library's %q (%v)", l.name, r, tok, want, err)
			}
			if got, ok := l.enc.Rank(tok); !ok || int(got) != r {
				t.Fatalf("%s: Rank(%q) = %d, %v; want %d", l.name, tok, got, ok, r)
			}
		}
		if _, err := l.codec.Decode([]uint{uint(l.enc.Len())}); err == nil {
			t.Fatalf("%s: the library has a token of rank %d", l.name, l.enc.Len())
		}
		for _, s := range []string{"", "not a single token at all", strings.Repeat("x", 200), "\xff\xfe\xfd"} {
			if r, ok := l.enc.Rank(s); ok {
				t.Fatalf("%s: Rank(%q) = %d", l.name, s, r)
			}
		}
	}
}

// corpus is real text and random text over the characters the patterns
// distinguish.
func corpus(t testing.TB) []string {
	var texts []string
	for _, glob := range []string{"*.go", "../../*.go", "../../../*.md", "../../../docs/*.md", "../../../turn/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	alphabet := []rune("abcxyzSTRELVMDstrelvmd'ABCZ ǅʰ中文日本語한국어\u0301\u0308 0123456789٣Ⅻ½.,;:!?-_/\\()[]{}<>@#$%^&*+=|~`\"€© \t\n\r\u00a0\u3000éßøÅΩЖж🙂")
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// longPieces are single pieces of both patterns far longer than a token:
// runs of one character, long words, a long run of symbols.
func longPieces() []string {
	rng := rand.New(rand.NewPCG(7, 8))
	word := func(n int, letters string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	return []string{
		strings.Repeat(" ", 95), strings.Repeat(" ", 96), strings.Repeat(" ", 1000),
		strings.Repeat("a", 97), strings.Repeat("ab", 500), strings.Repeat("=", 300),
		" " + word(120, "abcdefghijklmnopqrstuvwxyz"), word(3000, "etaoinshrdlu"),
		word(500, "!#$%&()*+,-.:;<=>?@[]^_{|}~"), strings.Repeat("日本語", 200),
	}
}

// A piece counts as the library counts it.
func TestCountMatchesTheLibrary(t *testing.T) {
	texts := corpus(t)
	for _, l := range libraries() {
		pieces := map[string]bool{}
		for _, s := range texts {
			for _, p := range l.pieces(t, s) {
				pieces[p] = true
			}
		}
		for _, p := range longPieces() {
			if got := l.pieces(t, p); len(got) != 1 {
				t.Fatalf("%s: %.20q is %d pieces", l.name, p, len(got))
			}
			pieces[p] = true
		}
		for p := range pieces {
			want, err := l.codec.Count(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.enc.Count(p); got != want {
				t.Fatalf("%s: Count(%q) = %d, the library's %d", l.name, p, got, want)
			}
		}
		t.Logf("%s: %d pieces", l.name, len(pieces))
	}
}

// merge is the byte-pair merge at its plainest, for bytes the library's
// pattern never hands over whole (it reads invalid UTF-8 as U+FFFD): the
// parts as strings, the vocabulary as a map.
func merge(ranks map[string]int, piece string) int {
	if _, ok := ranks[piece]; ok {
		return 1
	}
	var parts []string
	for i := range len(piece) {
		parts = append(parts, piece[i:i+1])
	}
	for {
		best, at := -1, -1
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := ranks[parts[i]+parts[i+1]]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			return len(parts)
		}
		parts[at] += parts[at+1]
		parts = append(parts[:at+1], parts[at+2:]...)
	}
}

// Any bytes count as the plain merge counts them, short and long.
func TestCountOfAnyBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, l := range libraries() {
		ranks := make(map[string]int, l.enc.Len())
		for r := range l.enc.Len() {
			ranks[l.enc.Token(r)] = r
		}
		// Bytes of tokens, so that merges happen, cut and joined at random
		// (partial UTF-8 sequences among them), and random bytes.
		for range 3000 {
			var b []byte
			n := rng.IntN(12)
			if rng.IntN(20) == 0 {
				n = 40 + rng.IntN(60)
			}
			for range n {
				tok := l.enc.Token(rng.IntN(l.enc.Len()))
				b = append(b, tok[:1+rng.IntN(len(tok))]...)
			}
			for range rng.IntN(4) {
				b = append(b, byte(0x80+rng.IntN(0x80)))
			}
			piece := string(b)
			if got, want := l.enc.Count(piece), merge(ranks, piece); got != want {
				t.Fatalf("%s: Count(%q) = %d, want %d", l.name, piece, got, want)
			}
		}
	}
}

// The heap merge of long pieces agrees with the scan on any piece.
func TestLongMergeAgreesWithShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	enc := O200k()
	for range 3000 {
		const alphabet = "  aeinrst\n\xe6\x97\xa5.,"
		b := make([]byte, 2+rng.IntN(longPiece-2))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := enc.countLong(string(b)), enc.countShort(string(b)); got != want {
			t.Fatalf("countLong(%q) = %d, countShort %d", b, got, want)
		}
	}
}

// A lookup that misses, the common case of a merge, ends within a few
// slots.
func TestProbesAreShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, l := range libraries() {
		slots := len(l.enc.table) / 4
		total, longest := 0, 0
		for range 100000 {
			i := rng.IntN(slots)
			n := 0
			for le32(l.enc.table, 4*i) != 0 {
				n++
				i = (i + 1) % slots
			}
			total += n
			longest = max(longest, n)
		}
		if mean := float64(total) / 100000; mean > 2 {
			t.Errorf("%s: a miss probes %.2f full slots on average", l.name, mean)
		}
		t.Logf("%s: %d slots for %d tokens, a miss probes %.2f full slots on average, at most %d", l.name, slots, l.enc.Len(), float64(total)/100000, longest)
	}
}

func BenchmarkCount(b *testing.B) {
	l := libraries()[0]
	var pieces []string
	size := 0
	for _, s := range corpus(b) {
		for _, p := range l.pieces(b, s) {
			pieces = append(pieces, p)
			size += len(p)
		}
	}
	b.Run("vocab", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, p := range pieces {
				l.enc.Count(p)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, p := range pieces {
				_, _ = l.codec.Count(p)
			}
		}
	})
}
