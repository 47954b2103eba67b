package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

// cl100kRegexp is the pre-tokenizer pattern of cl100k_base, as the library
// compiles it (codec.NewCl100kBase).
var cl100kRegexp = regexp2.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None)

// The splitter cuts every text where the library's pattern cuts it (DEL
// as a symbol, patternPieces).
func TestSplitCl100kMatchesTheLibrary(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, got := patternPieces(t, cl100kRegexp, s), []string(nil)
		splitCl100k(s, func(p string) { got = append(got, p) })
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("split of %q:\n got %q\nwant %q", s, got, want)
		}
	}
	for _, s := range []string{
		"", "a", " ", "  ", "   x", "Hello, World!", "don't I'LL we've THEY'RE it'S 'sa ''s", "a'ſ x'ſa 'ſ",
		"CamelCaseWords and HTTPServer", "x = 12345 + 3.14159;", "\n\n  \n\t", "line one\r\nline two\n\n\nend  ",
		"a/b//c\n/", "ǅungla ʰa\u0301b", "日本語のテキスト", "naïve café", "\u3000全角\u3000 ", "tabs\t\tand\vvert\fff",
	} {
		check(s)
	}
	splitCorpus(t, rand.New(rand.NewPCG(21, 22)), check)
}
