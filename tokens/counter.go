package tokens

import (
	"strings"
	"sync"

	"github.com/demiurge/demiurge/tokens/internal/vocab"
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
)

// New returns a counter of encoding with a piece cache of its own; For
// returns one shared per encoding, which is what callers want.
func New(encoding string) Counter {
	switch encoding {
	case O200k:
		return &bpe{name: O200k, v: vocab.O200k(), split: splitO200k}
	case Cl100k:
		return &bpe{name: Cl100k, v: vocab.Cl100k(), split: splitCl100k}
	}
	return estimator{}
}

// bpe counts with an embedded byte-pair encoding. It cuts the text into
// pieces with split (the encoding's pre-tokenizer written out,
// split_o200k.go, split_cl100k.go) and counts each distinct piece once by
// the vocabulary's merge, remembering the count: a piece's tokens do not
// depend on what surrounds it, and text repeats its words, indentation and
// punctuation.
type bpe struct {
	name  string
	v     vocab.Encoding
	split func(s string, yield func(string))

	mu sync.Mutex // guards pieces
	// pieces maps each piece met to its tokens. While a count is under
	// way, a piece first met in it maps to ^i, i its index in the count's
	// fresh pieces (token counts are never negative), so that every piece
	// costs one lookup, repeated or not.
	pieces map[string]int
}

// maxPieces bounds the remembered piece counts: a count that starts with
// more starts over.
const maxPieces = 1 << 16

// fresh is a piece first met in the text being counted (a slice of the
// text until the count ends) and how often the text has it.
type fresh struct {
	piece string
	times int
}

func (b *bpe) Name() string { return b.name }
func (b *bpe) Exact() bool  { return true }

func (b *bpe) Count(s string) int {
	if s == "" {
		return 0
	}
	return b.countPieces(asRunes(s))
}

func (b *bpe) countPieces(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pieces == nil || len(b.pieces) > maxPieces {
		// Sized for the text at hand: prose has a distinct piece every
		// 100–150 bytes and code more, so a large first text does not
		// pay for the map growing many times.
		b.pieces = make(map[string]int, min(len(s)/128, maxPieces))
	}
	total := 0
	var news []fresh
	b.split(s, func(piece string) {
		n, ok := b.pieces[piece]
		switch {
		case n >= 0 && ok:
			total += n
		case ok:
			news[^n].times++
		default:
			b.pieces[piece] = ^len(news)
			news = append(news, fresh{piece: piece, times: 1})
		}
	})
	if len(news) == 0 {
		return total
	}
	// The pieces are slices of s: copied into one string of their own, so
	// that the map keeps neither s alive nor one allocation per piece.
	size := 0
	for _, f := range news {
		size += len(f.piece)
	}
	var all strings.Builder
	all.Grow(size)
	for _, f := range news {
		all.WriteString(f.piece)
	}
	kept := all.String()
	for _, f := range news {
		// Counted here, one after another: the merge is about a quarter
		// of a first count, and spread over the processors it measures no
		// faster.
		n := b.v.Count(f.piece)
		// The entry's key is the slice of s: deleted, then written again
		// under the copy.
		delete(b.pieces, f.piece)
		b.pieces[kept[:len(f.piece)]] = n
		kept = kept[len(f.piece):]
		total += n * f.times
	}
	return total
}
