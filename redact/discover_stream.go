package redact

import (
	"bytes"
	"io"
	"sync"
)

// DefaultDiscoverWindow is the look-back of a DiscoveringStream unless its
// options say otherwise.
const DefaultDiscoverWindow = 65536

// stepWindows is the buffer, in windows, at which a DiscoveringStream
// searches and forwards: all but the last window (more or less a line) of
// it goes, so each byte is searched stepWindows/(stepWindows-1) times.
const stepWindows = 4

// DiscoverOptions configure a DiscoveringStream.
type DiscoverOptions struct {
	// Window is the look-back, in bytes (default DefaultDiscoverWindow):
	// no byte is forwarded before Window bytes after it have been searched
	// for secrets, so an occurrence of a secret up to Window bytes before
	// the text that gives it away ("password=…") is still replaced. It is
	// also the longest stretch of text discovery sees at once: a
	// give-away longer than that (a private key block, a JSON document)
	// may be missed.
	Window int
	// OnDiscover, if set, is called with each secret the first time the
	// stream finds its value, before any byte it could replace is
	// forwarded, so the caller can add it to the turn's set. It runs under
	// the stream's lock and must not write to the stream.
	OnDiscover func(Secret)
}

// DiscoveringStream is a Stream that also discovers secrets in what passes
// through it, the way Discover does in a string, and replaces them from
// then on: a command that prints "password=xyz" gets xyz replaced in its
// artifact, also where it appears bare on the next line. Markers are
// "<redacted:NAME>", as Replacements give them.
//
// Discovery runs over a sliding window: the bytes written are held back
// until Window more bytes after them have been searched (or the stream is
// closed), then forwarded through a Stream that knows every secret found so
// far. Searches overlap by at least Window bytes and start and end at line
// breaks where there are some, so a give-away shorter than Window is
// always seen whole, and a value or a name is rarely seen cut in two.
//
// Limits: an occurrence more than Window bytes before its give-away is
// forwarded before the secret is known, and stays. A value or a name cut
// by the edge of a search where no line break is near may be found in
// part, or a token without the word it continues, and that is then
// replaced as well: more is replaced, nothing leaks. Only the forms
// Discover recognises are found. Memory is bounded by about 6 × Window
// plus the longest value.
//
// A DiscoveringStream is safe for concurrent use; Close flushes it and
// does not close the underlying writer.
type DiscoveringStream struct {
	mu     sync.Mutex // guards everything below
	out    *Stream
	window int
	on     func(Secret)
	buf    []byte // written, not yet forwarded
	seen   map[string]bool
	found  []Secret
	closed bool
}

// NewDiscoveringStream returns a DiscoveringStream writing to w that
// replaces the values of replacements (value → marker) and every secret it
// discovers.
func NewDiscoveringStream(w io.Writer, replacements map[string]string, opts DiscoverOptions) *DiscoveringStream {
	window := opts.Window
	if window <= 0 {
		window = DefaultDiscoverWindow
	}
	seen := make(map[string]bool, len(replacements))
	for v := range replacements {
		seen[v] = true
	}
	return &DiscoveringStream{out: NewStream(w, replacements), window: window, on: opts.OnDiscover, seen: seen}
}

// Write holds p back until the window after it has been searched, and
// forwards what has been. It reports len(p) unless the underlying writer
// fails.
func (s *DiscoveringStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrStreamClosed
	}
	n := len(p)
	for len(p) > 0 {
		// Feed at most a window at a time, so a huge write costs no more
		// memory than small ones.
		k := min(len(p), s.window)
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		if len(s.buf) >= stepWindows*s.window {
			if err := s.step(false); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// Close searches and forwards the rest, then flushes the replacement
// stream. Closing twice is harmless.
func (s *DiscoveringStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.out.Close()
	}
	s.closed = true
	if err := s.step(true); err != nil {
		return err
	}
	return s.out.Close()
}

// Discovered returns the secrets found so far, in the order found.
func (s *DiscoveringStream) Discovered() []Secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Secret(nil), s.found...)
}

// step searches buf up to a cut and forwards all of it but the last window
// (all of it when final).
func (s *DiscoveringStream) step(final bool) error {
	cut, keep := len(s.buf), 0
	if !final {
		// End the search at the last line break in the second half, so
		// that the value on the last line is seen whole next time, and at
		// least a window is forwarded.
		half := stepWindows / 2 * s.window
		if nl := bytes.LastIndexByte(s.buf[half:], '\n'); nl >= 0 {
			cut = half + nl + 1
		}
		keep = s.window
	}
	s.learn(Discover(string(s.buf[:cut])))
	fwd := cut - keep
	if nl := bytes.LastIndexByte(s.buf[:fwd], '\n'); !final && nl >= fwd/2 {
		// Keep the start of the line too: the next search then starts at
		// a line, not inside a word, where a name cut short ("token=" of
		// "max_token=") or a token seen without what precedes it would be
		// found for what it is not. At least half is still forwarded, so
		// each byte is searched a bounded number of times.
		fwd = nl + 1
	}
	if _, err := s.out.Write(s.buf[:fwd]); err != nil {
		return err
	}
	s.buf = s.buf[:copy(s.buf, s.buf[fwd:])]
	return nil
}

// learn adds the secrets whose values are new to the replacement stream.
func (s *DiscoveringStream) learn(secrets []Secret) {
	var repl map[string]string
	for _, sec := range secrets {
		if s.seen[sec.Value] {
			continue
		}
		s.seen[sec.Value] = true
		s.found = append(s.found, sec)
		if repl == nil {
			repl = make(map[string]string)
		}
		repl[sec.Value] = Marker(sec.Name)
		if s.on != nil {
			s.on(sec)
		}
	}
	if repl != nil {
		s.out.Add(repl)
	}
}
