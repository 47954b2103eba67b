package process

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/redact"
)

// runRedactor feeds chunks the way drain.run does: held bytes stay in front
// of the next chunk.
func runRedactor(repl map[string]string, chunks []string) string {
	var out bytes.Buffer
	r := newStreamRedactor(&out, repl)
	var pending []byte
	for _, c := range chunks {
		data := append(pending, c...)
		held := r.process(data, false)
		pending = append([]byte(nil), data[len(data)-held:]...)
	}
	r.process(pending, true)
	return out.String()
}

func TestStreamRedactor(t *testing.T) {
	repl := map[string]string{"SECRET": "<redacted:A>", "SECRETLONG": "<redacted:B>", "tok": "<redacted:C>"}
	tests := []struct {
		name   string
		repl   map[string]string
		chunks []string
		want   string
	}{
		{name: "no values", repl: nil, chunks: []string{"abc", "SECRET"}, want: "abcSECRET"},
		{name: "no occurrence", repl: repl, chunks: []string{"hello ", "world"}, want: "hello world"},
		{name: "whole value in one chunk", repl: repl, chunks: []string{"a SECRET b"}, want: "a <redacted:A> b"},
		{name: "split across chunks", repl: repl, chunks: []string{"a SEC", "RET b"}, want: "a <redacted:A> b"},
		{name: "split byte by byte", repl: repl, chunks: strings.Split("xSECRETy", ""), want: "x<redacted:A>y"},
		{name: "longest wins across the boundary", repl: repl, chunks: []string{"SECRET", "LONG!"}, want: "<redacted:B>!"},
		{name: "value at the very end", repl: repl, chunks: []string{"..", "tok"}, want: "..<redacted:C>"},
		{name: "prefix at the end is kept", repl: repl, chunks: []string{"SECR"}, want: "SECR"},
		{name: "after the first occurrence", repl: repl, chunks: []string{"tok ", "SEC", "RET tok"}, want: "<redacted:C> <redacted:A> <redacted:C>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runRedactor(tt.repl, tt.chunks); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStreamRedactorMatchesReplaceAll: whatever the chunking, the output is
// redact.ReplaceAll of the whole input, including overlapping and
// self-overlapping values.
func TestStreamRedactorMatchesReplaceAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := "ab c"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for iter := range 5000 {
		repl := map[string]string{}
		n := 1 + rng.IntN(3)
		if iter%4 == 0 {
			n = 9 + rng.IntN(6) // many values at once
		}
		for range n {
			repl[word(1+rng.IntN(5))] = "<" + word(rng.IntN(3)) + ">"
		}
		whole := word(rng.IntN(120))
		var chunks []string
		for rest := whole; len(rest) > 0; {
			k := 1 + rng.IntN(len(rest))
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		if got, want := runRedactor(repl, chunks), redact.ReplaceAll(whole, repl); got != want {
			t.Fatalf("iteration %d: values %q, input %q in chunks %q:\ngot  %q\nwant %q", iter, repl, whole, chunks, got, want)
		}
	}
}
