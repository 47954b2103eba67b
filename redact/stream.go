package redact

import (
	"errors"
	"io"
	"maps"
	"sync"
)

// ErrStreamClosed is returned by Write after Close.
var ErrStreamClosed = errors.New("redact: write to closed stream")

// ReplaceAll returns s with every occurrence of a replacement key replaced
// by its value (value → marker, e.g. "s3cr3t" → "<redacted:TOKEN>"). At each
// position the leftmost match wins and, among matches starting there, the
// longest; replaced text is never searched again. Empty keys are ignored.
// Only exact values are caught: an encoded or transformed secret is not.
func ReplaceAll(s string, replacements map[string]string) string {
	return newMatcher(replacements).replaceString(s)
}

// Stream is an io.WriteCloser that replaces exact values in everything
// written through it before passing it on, whatever the chunking: it holds
// back a tail shorter than the longest value until the next Write shows
// whether a value continues across the boundary. The bytes it forwards are
// exactly ReplaceAll of the concatenated input. Close flushes the tail; it
// does not close the underlying writer, which stays the caller's.
//
// Add grows the set while the stream runs; the bytes forwarded from then
// on are ReplaceAll of the rest of the input with the larger set. Bytes
// forwarded before cannot be called back: an occurrence of an added value
// that began in them stays as it was.
//
// A Stream is safe for concurrent use; concurrent writes are serialised in
// an unspecified order. After the underlying writer fails, every Write and
// Close returns that error.
type Stream struct {
	mu      sync.Mutex // guards everything below
	w       io.Writer
	repl    map[string]string
	m       *matcher
	pending []byte
	out     []byte
	err     error
	closed  bool
}

// NewStream returns a Stream writing to w with replacements value → marker.
func NewStream(w io.Writer, replacements map[string]string) *Stream {
	repl := maps.Clone(replacements)
	return &Stream{w: w, repl: repl, m: newMatcher(repl)}
}

// Add adds replacements value → marker; a value the stream already knows
// keeps its marker. The bytes held back so far are searched with the
// larger set.
func (s *Stream) Add(replacements map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grown := false
	for v, mark := range replacements {
		if _, ok := s.repl[v]; !ok && v != "" {
			if s.repl == nil {
				s.repl = make(map[string]string, len(replacements))
			}
			s.repl[v] = mark
			grown = true
		}
	}
	if grown {
		s.m = newMatcher(s.repl)
	}
}

// Write replaces what can be decided and forwards it; it holds back at most
// maxlen−1 bytes. It reports len(p) unless the underlying writer fails.
//
// The bytes of p are searched and forwarded where they lie, not copied
// first: only the held-back tail is. When bytes are held back from the
// last Write, they are decided first, together with as much of p as a
// value starting in them can reach (maxlen−1 bytes); the search of p then
// resumes where that left off: at the start of p, or after a value that
// began in the held bytes and ended in p. Every decision sees the whole
// longest value, as a search of the concatenated input would.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.closed {
		return 0, ErrStreamClosed
	}
	if len(s.m.vals) == 0 {
		return s.forward(p, len(p))
	}
	n, reach := len(p), s.m.maxLen-1
	if len(s.pending)+len(p) < s.m.maxLen || (len(s.pending) > 0 && len(p) <= reach) {
		// Too little to search in place: gather it.
		s.pending = append(s.pending, p...)
		// A match may start only where the whole longest value fits.
		if err := s.flush(max(len(s.pending)-s.m.maxLen+1, 0)); err != nil {
			return 0, err
		}
		return n, nil
	}
	if held := len(s.pending); held > 0 {
		s.pending = append(s.pending, p[:reach]...)
		done, err := s.decide(s.pending, held)
		if err != nil {
			return 0, err
		}
		p = p[done-held:]
		s.pending = s.pending[:0]
	}
	done, err := s.decide(p, max(len(p)-s.m.maxLen+1, 0))
	if err != nil {
		return 0, err
	}
	s.pending = append(s.pending, p[done:]...)
	return n, nil
}

// Close flushes the held-back tail. Closing twice is harmless.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return nil
	}
	s.closed = true
	return s.flush(len(s.pending))
}

// flush forwards the decided part of pending, up to limit or the end of a
// match that starts before it, and keeps the rest.
func (s *Stream) flush(limit int) error {
	done, err := s.decide(s.pending, limit)
	s.pending = s.pending[:copy(s.pending, s.pending[done:])]
	return err
}

// decide forwards b up to limit, or to the end of a match that starts
// before limit, with every match replaced, and returns where it stopped.
// Without a match the bytes are forwarded from b itself, not copied.
func (s *Stream) decide(b []byte, limit int) (done int, err error) {
	limit = min(limit, len(b))
	out, done := b[:limit], limit
	if p, k, ok := find(s.m, b, 0, limit); ok {
		s.out, done = scanFrom(s.m, s.out[:0], b, limit, p, k, ok)
		out = s.out
	}
	_, err = s.forward(out, 0)
	return done, err
}

func (s *Stream) forward(b []byte, n int) (int, error) {
	if len(b) == 0 {
		return n, nil
	}
	w, err := s.w.Write(b)
	if err == nil && w < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		s.err = err
		return 0, err
	}
	return n, nil
}
