package tokens

import (
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Both encodings count every text as the library counts it: the
// repository's sources and docs, random text over the characters the
// patterns distinguish, bytes that are not UTF-8, and pieces far longer
// than a token.
func TestCountsMatchTheLibrary(t *testing.T) {
	var texts []string
	for _, glob := range []string{"*.go", "internal/vocab/*.go", "../*.md", "../docs/*.md", "../turn/*.go", "../provider/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	rng := rand.New(rand.NewPCG(41, 42))
	alphabet := append([]rune("ſ🙂"), pieceAlphabet...)
	for range 1000 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	invalid := []string{"\xff", "\xfe", "\x80", "\xe6\x97", "\xf0\x9f\x99", "\xed\xa0\x80", "\xc0\xaf", "a", " ", "'s", "日", "\n", "1"}
	for range 1000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(invalid[rng.IntN(len(invalid))])
		}
		texts = append(texts, b.String())
	}
	blob := make([]byte, 3000)
	for i := range blob {
		blob[i] = byte(rng.Uint32())
	}
	texts = append(texts,
		"invalid \xff\xfe bytes", string(blob), base64.StdEncoding.EncodeToString(blob),
		strings.Repeat(" ", 5000)+"x", strings.Repeat("ab", 4000), strings.Repeat("-=", 2000)+"\n",
		strings.Repeat("\n", 300), strings.Repeat("日本語", 500), strings.Repeat("\xff", 200),
	)
	for _, enc := range []struct {
		name string
		lib  *codec.Codec
	}{{O200k, codec.NewO200kBase()}, {Cl100k, codec.NewCl100kBase()}} {
		fresh := New(enc.name)
		for _, s := range texts {
			want, err := enc.lib.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := fresh.Count(s); got != want {
				t.Fatalf("%s: count of %.200q = %d, the library's %d", enc.name, s, got, want)
			}
			if got := For(enc.name).Count(s); got != want {
				t.Fatalf("%s (shared): count of %.200q = %d, the library's %d", enc.name, s, got, want)
			}
		}
	}
}
