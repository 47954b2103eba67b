package core

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The hand-written name checks accept exactly what the patterns they
// replace accepted.
func TestNameShapesMatchTheirPatterns(t *testing.T) {
	cases := []struct {
		name    string
		pattern *regexp.Regexp
		check   func(string) bool
	}{
		{"ValidID", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$`), ValidID},
		{"ValidScheduleID", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`), ValidScheduleID},
		{"validPolicyWord", regexp.MustCompile(`^[a-z][a-z_]{0,31}$`), validPolicyWord},
		{"validIdentifier", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`), validIdentifier},
		{"validModulePath", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`), validModulePath},
	}
	fixed := []string{"", "a", "_", "-", "0", "a-b", "a.b", "a..b", ".a", "a.", "A_b9", "é", "a\n",
		strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("a", 64), strings.Repeat("a", 65)}
	const alphabet = "aZ09_-.\n é"
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := append([]string(nil), fixed...)
	for range 20000 {
		n := rng.IntN(70)
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, c := range cases {
		for _, in := range inputs {
			if got, want := c.check(in), c.pattern.MatchString(in); got != want {
				t.Fatalf("%s(%q) = %v, the pattern says %v", c.name, in, got, want)
			}
		}
	}
}
