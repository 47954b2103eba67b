package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Encodings a Counter can use.
const (
	O200k    = "o200k_base"
	Cl100k   = "cl100k_base"
	Estimate = "estimate"
)

// Counter counts the tokens of a text.
type Counter interface {
	Count(s string) int
	// Name is the encoding ("o200k_base", "cl100k_base") or "estimate".
	Name() string
	// Exact reports whether Count is the model's own tokenizer (then a
	// smaller safety margin suffices).
	Exact() bool
}

// For returns the counter of encoding: a BPE for O200k and Cl100k, the
// estimate for anything else.
func For(encoding string) Counter {
	switch encoding {
	case O200k:
		return o200k()
	case Cl100k:
		return cl100k()
	}
	return estimator{}
}

var (
	o200k  = sync.OnceValue(func() Counter { return &bpe{name: O200k, c: codec.NewO200kBase()} })
	cl100k = sync.OnceValue(func() Counter { return &bpe{name: Cl100k, c: codec.NewCl100kBase()} })
)

// bpe counts with an embedded byte-pair encoding.
type bpe struct {
	name string
	c    *codec.Codec
}

func (b *bpe) Name() string { return b.name }
func (b *bpe) Exact() bool  { return true }

func (b *bpe) Count(s string) int {
	if s == "" {
		return 0
	}
	n, err := b.c.Count(s)
	if err != nil {
		// The codec fails only on a pattern-engine error; the estimate
		// still gives a usable size.
		return estimator{}.Count(s)
	}
	return n
}
