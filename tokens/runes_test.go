package tokens

import (
	"math/rand/v2"
	"testing"
)

// asRunes is Go's conversion to runes, which the pattern engine makes of
// its input, and back.
func TestAsRunesIsTheConversionToRunes(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	pieces := []string{"a", " ", "é", "日", "🙂", "\uFFFD", "\xff", "\x80", "\xe6\x97", "\xf0\x9f\x99", "\xed\xa0\x80", "\xc0\xaf"}
	for range 5000 {
		var s string
		for range rng.IntN(12) {
			s += pieces[rng.IntN(len(pieces))]
		}
		if got, want := asRunes(s), string([]rune(s)); got != want {
			t.Fatalf("asRunes(%q) = %q, want %q", s, got, want)
		}
	}
}
