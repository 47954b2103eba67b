package tokens

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// o200kPattern is the pre-tokenizer pattern of o200k_base, as the library
// compiles it (codec.NewO200kBase).
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var o200kRegexp = regexp2.MustCompile(o200kPattern, regexp2.None)

// patternPieces cuts s (valid UTF-8) with re, a pre-tokenizer pattern as
// the library compiles it, where OpenAI's tiktoken cuts it. The two differ
// only on U+007F (DEL), which the library's engine leaves out of its
// negated classes and so drops (TestDeleteIsASymbol): re reads it as
// U+001F, a control character in the same classes as DEL in OpenAI's
// pattern and in none of the library's it misses, and the pieces are cut
// from s at the same places.
func patternPieces(t testing.TB, re *regexp2.Regexp, s string) []string {
	var out []string
	m, err := re.FindStringMatch(strings.ReplaceAll(s, "\x7f", "\x1f"))
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		i, n := m.ByteRange()
		out = append(out, s[i:i+n])
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ourPieces(s string) []string {
	var out []string
	splitO200k(s, func(p string) { out = append(out, p) })
	return out
}

// pieceAlphabet mixes what the pattern distinguishes: lower, upper, title
// and other letters, modifier letters, marks, digits of several scripts,
// letter numbers, punctuation and symbols, every kind of whitespace, and
// the contractions' apostrophe and letters (ſ among them), and control
// characters. It has no U+007F, whose count the library gets wrong
// (symbolAlphabet adds it where only the pieces are compared).
var pieceAlphabet = []rune("abcxyzSTRELVMDstrelvmd'ABCZ" + "ǅǈ" + "ʰʹˆ" + "中文日本語한국어" + "\u0301\u0308\u0903\u20dd" +
	"0123456789٣४Ⅻ½" + ".,;:!?-_/\\()[]{}<>@#$%^&*+=|~`\"" + "€©→" +
	" \t\n\r\v\f\u0085\u00a0\u1680\u2003\u2028\u2029\u202f\u3000" + "éßøÅçñΩπЖж" + "ſ\x00\x1c\x1f")

// symbolAlphabet is pieceAlphabet with U+007F (DEL), for the splitters'
// tests (patternPieces).
var symbolAlphabet = append([]rune("\x7f"), pieceAlphabet...)

// The splitter cuts every text where the library's pattern cuts it (DEL
// as a symbol, patternPieces).
func TestSplitO200kMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(s string) {
		t.Helper()
		want, got := patternPieces(t, o200kRegexp, s), ourPieces(s)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("split of %q:\n got %q\nwant %q", s, got, want)
		}
	}
	for _, s := range []string{
		"", "a", " ", "  ", "   x", "Hello, World!", "don't I'LL we've THEY'RE it'S", "CamelCaseWords and HTTPServer",
		"x = 12345 + 3.14159;", "\n\n  \n\t", "line one\r\nline two\n\n\nend  ", "  indented\n    more", "a/b//c\n/",
		"ǅungla ʰa\u0301b", "日本語のテキスト", "naïve café ÅSTRÖM", "\u3000全角\u3000 ", "tabs\t\tand\vvert\fff",
		"a'ſ x'ſa 'ſ A'Ss it'ſ IT'ſ it'ſx '\u017f", "\x00\x1c\x1f\x7f word\x1c a\x7fb \x7f\x7f  \x7f", "  12\u0663 x\u00a0\n (\n\n) ./\n",
		"é'S ab\u0301cd",
	} {
		check(s)
	}
	splitCorpus(t, rng, check)
}

// splitCorpus passes check 4,000 random texts of symbolAlphabet, then real
// text: the package's own sources and the repository's docs.
func splitCorpus(t *testing.T, rng *rand.Rand, check func(string)) {
	t.Helper()
	for range 4000 {
		n := rng.IntN(40)
		var b strings.Builder
		for range n {
			b.WriteRune(symbolAlphabet[rng.IntN(len(symbolAlphabet))])
		}
		check(b.String())
	}
	for _, text := range readGlobs(t, "*.go", "../*.md", "../docs/*.md", "../turn/*.go") {
		check(text)
	}
}

// readGlobs returns the contents of the files the patterns name.
func readGlobs(t *testing.T, globs ...string) []string {
	t.Helper()
	var texts []string
	for _, glob := range globs {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	return texts
}

// Every pair of ASCII characters, alone and between the contexts that
// change what the pattern does with them, is cut where the library cuts
// it (DEL as a symbol): the splitter decides ASCII pieces on bytes alone.
func TestSplitO200kASCIIPairs(t *testing.T) {
	var b strings.Builder
	for c := range utf8.RuneSelf {
		for d := range utf8.RuneSelf {
			for _, ctx := range [][2]string{{"", ""}, {" ", "x"}, {"a", "  "}, {"Ab", "é"}, {"7", "\u00a0"}} {
				b.Reset()
				b.WriteString(ctx[0])
				b.WriteByte(byte(c))
				b.WriteByte(byte(d))
				b.WriteString(ctx[1])
				s := b.String()
				want, got := patternPieces(t, o200kRegexp, s), ourPieces(s)
				if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
					t.Fatalf("split of %q:\n got %q\nwant %q", s, got, want)
				}
			}
		}
	}
}

// Counting through the pieces gives the library's count of the whole text.
func TestO200kCountMatchesTheLibrary(t *testing.T) {
	lib := codec.NewO200kBase()
	ours := For(O200k)
	rng := rand.New(rand.NewPCG(3, 4))
	var texts []string
	for range 500 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteRune(pieceAlphabet[rng.IntN(len(pieceAlphabet))])
		}
		texts = append(texts, b.String())
	}
	files, _ := filepath.Glob("../turn/*.go")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		texts = append(texts, string(b))
	}
	texts = append(texts, "invalid \xff\xfe bytes, read as U+FFFD")
	for _, s := range texts {
		want, err := lib.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := ours.Count(s); got != want {
			t.Fatalf("count of %q = %d, the library's %d", s, got, want)
		}
	}
}

// A counter gives the library's counts again once it knows the pieces,
// and while other goroutines count through it: the pieces first met in a
// count are in its map until that count has finished.
func TestO200kCountsAgainAndConcurrently(t *testing.T) {
	lib := codec.NewO200kBase()
	var texts []string
	files, _ := filepath.Glob("../turn/*.go")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		texts = append(texts, string(b), strings.ToUpper(string(b)))
	}
	want := make([]int, len(texts))
	for i, s := range texts {
		n, err := lib.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = n
	}
	c := New(O200k)
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(texts))
	for g := range 4 {
		wg.Go(func() {
			for round := range 2 {
				for i := range texts {
					i := (i + g*len(texts)/4) % len(texts)
					if got := c.Count(texts[i]); got != want[i] {
						errs <- fmt.Sprintf("round %d: count of text %d = %d, the library's %d", round, i, got, want[i])
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkCountMiBSource counts 1 MiB of the repository's own Go sources
// and docs with a fresh piece cache each time: the first count of a text
// that was never seen, not a repeated one.
func BenchmarkCountMiBSource(b *testing.B) {
	var sb strings.Builder
	for _, glob := range []string{"../*/*.go", "../*.md", "../docs/*.md"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			data, _ := os.ReadFile(f)
			sb.Write(data)
			if sb.Len() >= 1<<20 {
				break
			}
		}
	}
	text := sb.String()
	if len(text) > 1<<20 {
		text = strings.ToValidUTF8(text[:1<<20], "")
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c := New(O200k)
		c.Count(text)
	}
}
