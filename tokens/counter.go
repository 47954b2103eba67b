package tokens

import (
	"runtime"
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

	// The vocabularies are loaded by the first count that needs one (a
	// new piece, a text of o200k that is not valid UTF-8, any cl100k
	// text), not by New: for a session whose model has no encoding, or
	// whose requests are never counted, they are never loaded.
	o200kCodec  = sync.OnceValue(codec.NewO200kBase)
	cl100kCodec = sync.OnceValue(codec.NewCl100kBase)
)

// New returns a counter of encoding with a piece cache of its own; For
// returns one shared per encoding, which is what callers want.
func New(encoding string) Counter {
	switch encoding {
	case O200k:
		return &bpe{name: O200k, codec: o200kCodec, split: splitO200k}
	case Cl100k:
		return &bpe{name: Cl100k, codec: cl100kCodec}
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
	codec func() *codec.Codec
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
	if b.split != nil && utf8.ValidString(s) {
		return b.countPieces(s)
	}
	return b.whole(s)
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
	counts := b.countFresh(news)
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
	for i, f := range news {
		// The entry's key is the slice of s: deleted, then written again
		// under the copy.
		delete(b.pieces, f.piece)
		b.pieces[kept[:len(f.piece)]] = counts[i]
		kept = kept[len(f.piece):]
		total += counts[i] * f.times
	}
	return total
}

// countFresh counts each fresh piece through the library. A text of many
// new pieces (the first count of a large text) spreads them over the
// processors: the library's pattern engine and merges are most of the cost
// of a new piece, and each piece is counted independently.
func (b *bpe) countFresh(news []fresh) []int {
	counts := make([]int, len(news))
	workers := min(runtime.GOMAXPROCS(0), 4, len(news)/parallelPieces)
	if workers < 2 {
		for i, f := range news {
			counts[i] = b.whole(f.piece)
		}
		return counts
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(news); i += workers {
				counts[i] = b.whole(news[i].piece)
			}
		})
	}
	wg.Wait()
	return counts
}

// parallelPieces is how many new pieces each extra processor must get
// before counting is spread at all.
const parallelPieces = 512

// whole counts s through the library alone.
func (b *bpe) whole(s string) int {
	n, err := b.codec().Count(s)
	if err != nil {
		// The codec fails only on a pattern-engine error; the estimate
		// still gives a usable size.
		return estimator{}.Count(s)
	}
	return n
}
