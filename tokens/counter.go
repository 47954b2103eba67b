package tokens

import (
	"strings"
	"sync"
	"unicode/utf8"

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
	o200k  = sync.OnceValue(func() Counter { return New(O200k) })
	cl100k = sync.OnceValue(func() Counter { return New(Cl100k) })

	o200kCodec  = sync.OnceValue(codec.NewO200kBase)
	cl100kCodec = sync.OnceValue(codec.NewCl100kBase)
)

// New returns a counter of encoding with a piece cache of its own; For
// returns one shared per encoding, which is what callers want.
func New(encoding string) Counter {
	switch encoding {
	case O200k:
		return &bpe{name: O200k, c: o200kCodec(), split: splitO200k}
	case Cl100k:
		return &bpe{name: Cl100k, c: cl100kCodec()}
	}
	return estimator{}
}

// bpe counts with an embedded byte-pair encoding. With split (the
// encoding's pre-tokenizer written out, split_o200k.go) it cuts the text
// into pieces itself and counts each distinct piece once through the
// library, remembering the count: a piece's tokens do not depend on what
// surrounds it, and text repeats its words, indentation and punctuation.
type bpe struct {
	name  string
	c     *codec.Codec
	split func(s string, yield func(string))

	mu     sync.Mutex // guards pieces
	pieces map[string]int
}

// maxPieces bounds the remembered piece counts; when full they start over.
const maxPieces = 1 << 16

func (b *bpe) Name() string { return b.name }
func (b *bpe) Exact() bool  { return true }

func (b *bpe) Count(s string) int {
	if s == "" {
		return 0
	}
	if b.split != nil && utf8.ValidString(s) {
		return b.countPieces(s)
	}
	return b.whole(s)
}

func (b *bpe) countPieces(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	total := 0
	b.split(s, func(piece string) {
		n, ok := b.pieces[piece]
		if !ok {
			n = b.whole(piece)
			if b.pieces == nil || len(b.pieces) >= maxPieces {
				b.pieces = make(map[string]int, 1024)
			}
			// A copy: the piece would otherwise keep all of s alive.
			b.pieces[strings.Clone(piece)] = n
		}
		total += n
	})
	return total
}

// whole counts s through the library alone.
func (b *bpe) whole(s string) int {
	n, err := b.c.Count(s)
	if err != nil {
		// The codec fails only on a pattern-engine error; the estimate
		// still gives a usable size.
		return estimator{}.Count(s)
	}
	return n
}
