package udiff

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// Expected outputs are those of Python's difflib.unified_diff(a.splitlines(),
// b.splitlines(), "a/f", "b/f", lineterm="") joined by "\n".
func TestUnifiedDiffMatchesDifflib(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"a\nb\nc\n", "a\nB\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"},
		{"", "x\n", "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x"},
		{"x\n", "", "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\nY\n14\n15\n",
			"--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n@@ -10,6 +10,6 @@\n 10\n 11\n 12\n-13\n+Y\n 14\n 15"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\nX\n4\n5\n6\nY\n8\n",
			"--- a/f\n+++ b/f\n@@ -1,8 +1,8 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n-7\n+Y\n 8"},
		{"a\nb\nc\nd\n", "a\nc\nd\ne\n", "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n c\n d\n+e"},
		{"same\n", "same\n", ""},
	} {
		if got := Unified("a/f", "b/f", SplitLines(tt.a), SplitLines(tt.b)); got != tt.want {
			t.Errorf("diff(%q, %q)=\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSplitLines(t *testing.T) {
	for in, want := range map[string][]string{
		"":            nil,
		"a":           {"a"},
		"a\n":         {"a"},
		"a\r\nb\rc\n": {"a", "b", "c"},
		"\n\n":        {"", ""},
	} {
		if got := SplitLines(in); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("splitLines(%q)=%q, want %q", in, got, want)
		}
	}
}

// TestDiffOpcodesRebuild: applying the edit script to a gives b, for
// random line sequences, including past maxEditDistance.
func TestDiffOpcodesRebuild(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	gen := func(n, alphabet int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = strconv.Itoa(rng.Intn(alphabet))
		}
		return out
	}
	for i := 0; i < 300; i++ {
		a, b := gen(rng.Intn(40), 1+rng.Intn(6)), gen(rng.Intn(40), 1+rng.Intn(6))
		if i%50 == 0 {
			a, b = gen(3000, 1000), gen(3000, 1000) // forces the fallback
		}
		var rebuilt []string
		ai, bj := 0, 0
		for _, op := range diffOpcodes(a, b) {
			if op.i1 != ai || op.j1 != bj {
				t.Fatalf("case %d: opcode %+v does not continue at (%d,%d)", i, op, ai, bj)
			}
			switch op.tag {
			case 'e':
				if strings.Join(a[op.i1:op.i2], "\n") != strings.Join(b[op.j1:op.j2], "\n") {
					t.Fatalf("case %d: equal opcode %+v over different lines", i, op)
				}
				rebuilt = append(rebuilt, a[op.i1:op.i2]...)
			default:
				rebuilt = append(rebuilt, b[op.j1:op.j2]...)
			}
			ai, bj = op.i2, op.j2
		}
		if ai != len(a) || bj != len(b) || strings.Join(rebuilt, ",") != strings.Join(b, ",") {
			t.Fatalf("case %d: script does not turn a into b", i)
		}
	}
}

// TestMyersIsMinimal: the number of changed lines equals len(a)+len(b)-2·LCS.
func TestMyersIsMinimal(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 200; i++ {
		a, b := make([]int32, rng.Intn(30)), make([]int32, rng.Intn(30))
		for j := range a {
			a[j] = int32(rng.Intn(4))
		}
		for j := range b {
			b[j] = int32(rng.Intn(4))
		}
		matches, ok := myers(a, b)
		if !ok {
			t.Fatal("small input exceeded the edit bound")
		}
		if got, want := len(matches), lcs(a, b); got != want {
			t.Fatalf("case %d: %d matches, LCS is %d", i, got, want)
		}
	}
}

func lcs(a, b []int32) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}
