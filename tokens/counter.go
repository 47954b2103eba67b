package tokens

import (
	"runtime"
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
	return b.countPieces(asRunes(s))
}

func (b *bpe) countPieces(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	total := 0
	var missing map[string]int // pieces not counted yet, with how often s has each
	b.split(s, func(piece string) {
		if n, ok := b.pieces[piece]; ok {
			total += n
			return
		}
		if missing == nil {
			missing = map[string]int{}
		}
		missing[piece]++
	})
	if len(missing) == 0 {
		return total
	}
	counts := b.countMissing(missing)
	if b.pieces == nil || len(b.pieces)+len(counts) > maxPieces {
		b.pieces = make(map[string]int, max(1024, len(counts)))
	}
	for piece, n := range counts {
		total += n * missing[piece]
		// A copy: the piece would otherwise keep all of s alive.
		b.pieces[strings.Clone(piece)] = n
	}
	return total
}

// countMissing counts each piece by the merge. A text of many new pieces
// (the first count of a large text) spreads them over the processors: each
// piece is counted independently.
func (b *bpe) countMissing(missing map[string]int) map[string]int {
	out := make(map[string]int, len(missing))
	workers := min(runtime.GOMAXPROCS(0), 4, len(missing)/parallelPieces)
	if workers < 2 {
		for piece := range missing {
			out[piece] = b.whole(piece)
		}
		return out
	}
	pieces := make([]string, 0, len(missing))
	for piece := range missing {
		pieces = append(pieces, piece)
	}
	counts := make([]int, len(pieces))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(pieces); i += workers {
				counts[i] = b.whole(pieces[i])
			}
		}()
	}
	wg.Wait()
	for i, piece := range pieces {
		out[piece] = counts[i]
	}
	return out
}

// parallelPieces is how many new pieces each extra processor must get
// before counting is spread at all.
const parallelPieces = 512

// whole counts one piece by the vocabulary's byte-pair merge.
func (b *bpe) whole(piece string) int { return b.v.Count(piece) }
