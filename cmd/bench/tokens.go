package main

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/demiurge/demiurge/tokens"
)

// tokenCountTarget is the limit on counting 1 MiB of text (issue 15).
const tokenCountTarget = 50 * time.Millisecond

// tokenRows counts 1 MiB of text with o200k_base: with a fresh counter
// each time (nothing of the text seen before), and again with a counter
// that has counted it once.
func tokenRows(c counts) ([]row, error) {
	text := prose(1 << 20)
	n := max(3, c.runs/2)
	var cold []time.Duration
	for range n {
		counter := tokens.New(tokens.O200k)
		start := time.Now()
		counter.Count(text)
		cold = append(cold, time.Since(start))
	}
	warm := tokens.New(tokens.O200k)
	warm.Count(text)
	again, err := sample(0, n, func() error { warm.Count(text); return nil })
	if err != nil {
		return nil, err
	}
	rows := timedRows(figTokens+", first count", cold, tokenCountTarget)
	return append(rows, timedRows(figTokens+", counted before", again, tokenCountTarget)...), nil
}

// prose is about size bytes of text shaped like prose and code: words of
// a vocabulary of 5,000 drawn with a Zipf law, capitals, numbers,
// punctuation, indented lines and blank lines, from a fixed seed.
func prose(size int) string {
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := make([]string, 5000)
	for i := range vocab {
		var w strings.Builder
		for range 2 + rng.IntN(9) {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	var b strings.Builder
	for b.Len() < size {
		if rng.IntN(12) == 0 {
			b.WriteString("\n" + strings.Repeat("    ", rng.IntN(3)))
		}
		w := vocab[zipf.Uint64()]
		switch rng.IntN(20) {
		case 0:
			w = strings.ToUpper(w[:1]) + w[1:]
		case 1:
			w = strings.Repeat("9", 1+rng.IntN(5))
		case 2:
			w += ","
		case 3:
			w += "."
		case 4:
			w = "(" + w + ")"
		}
		b.WriteString(w + " ")
	}
	return b.String()[:size]
}
