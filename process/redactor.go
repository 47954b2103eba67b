package process

import (
	"bytes"
	"io"
	"slices"

	"github.com/demiurge/demiurge/redact"
)

// streamRedactor applies redact's exact-value replacement to a stream
// without its per-write copies in the common case where no value occurs.
//
// Its output is always redact.ReplaceAll of the whole stream. It rests on
// one fact about that function (leftmost match first, longest at a
// position, replaced text never searched again): if no occurrence of any
// value spans position c of the input, replacing the input before c and
// the input from c separately gives the same text as replacing it whole.
//
// While no value has occurred, every position up to len(data)−maxLen+1 of
// the bytes seen so far is such a cut: an occurrence spanning it would
// start before it and so lie wholly inside data, where it would have been
// found. The fast path writes those bytes through unchanged and hands the
// rest (fewer than maxLen bytes) back to be put in front of the next read.
// At the first occurrence it writes the bytes before it unchanged and
// passes everything from that occurrence on to a redact.Stream, which then
// does all the work for the rest of the stream.
type streamRedactor struct {
	out    io.Writer
	repl   map[string]string
	vals   [][]byte
	maxLen int
	slow   *redact.Stream // set from the first occurrence on
}

// fastPathValues is the most values the fast path scans for one by one;
// with more (a turn that has discovered many secrets) redact.Stream's
// single pass over all of them is the faster from the first byte.
const fastPathValues = 8

func newStreamRedactor(out io.Writer, repl map[string]string) *streamRedactor {
	r := &streamRedactor{out: out, repl: repl}
	for v := range repl {
		if v != "" {
			r.vals = append(r.vals, []byte(v))
			r.maxLen = max(r.maxLen, len(v))
		}
	}
	slices.SortFunc(r.vals, bytes.Compare) // a fixed order, for reproducible work
	if len(r.vals) > fastPathValues {
		r.slow = redact.NewStream(out, repl)
	}
	return r
}

// holdMax is the most process may hand back.
func (r *streamRedactor) holdMax() int { return max(r.maxLen-1, 0) }

// process consumes data — the bytes it handed back last time followed by
// newly read ones — and returns how many bytes at the end of data it did
// not consume; the caller puts them in front of the next data. final marks
// the end of the stream: everything is then consumed and flushed.
func (r *streamRedactor) process(data []byte, final bool) (held int) {
	if r.slow != nil {
		_, _ = r.slow.Write(data) // the sink never fails
		if final {
			_ = r.slow.Close()
		}
		return 0
	}
	if len(r.vals) == 0 {
		_, _ = r.out.Write(data)
		return 0
	}
	cut := len(data) - r.maxLen + 1
	if final {
		cut = len(data)
	}
	first := -1
	for _, v := range r.vals {
		if i := bytes.Index(data, v); i >= 0 && i < cut && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		if cut <= 0 {
			return len(data)
		}
		_, _ = r.out.Write(data[:cut])
		return len(data) - cut
	}
	if first > 0 {
		_, _ = r.out.Write(data[:first])
	}
	r.slow = redact.NewStream(r.out, r.repl)
	return r.process(data[first:], final)
}
