package process

import (
	"io"

	"github.com/demiurge/demiurge/redact"
)

// streamRedactor is the exact-value stage of a drain: redact.Stream, which
// replaces every value in one pass whatever the chunking and forwards
// unmatched bytes without copying them. Its output is redact.ReplaceAll of
// the whole stream. It holds nothing back itself: the Stream keeps the
// tail that may still start a value.
type streamRedactor struct{ s *redact.Stream }

func newStreamRedactor(out io.Writer, repl map[string]string) *streamRedactor {
	return &streamRedactor{s: redact.NewStream(out, repl)}
}

// holdMax is the most process may hand back: nothing.
func (r *streamRedactor) holdMax() int { return 0 }

// process consumes data; final marks the end of the stream, which flushes
// the Stream's tail. The sink never fails, so neither does the Stream.
func (r *streamRedactor) process(data []byte, final bool) (held int) {
	_, _ = r.s.Write(data)
	if final {
		_ = r.s.Close()
	}
	return 0
}

// add makes the stage replace more values from now on; the bytes the
// Stream still holds are searched with them too.
func (r *streamRedactor) add(repl map[string]string) { r.s.Add(repl) }
