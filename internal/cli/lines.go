package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
)

// lineSource is the one reader of an interactive input: a single goroutine
// reads lines and hands each to whoever asks next, the conversation or an
// approval question. Nobody else reads the input, so no reader can outlive
// its question and take the answer meant for the next one.
//
// The goroutine reads one line ahead at most: it reads a line, then waits
// until Next takes it (or Close stops it). Close stops the goroutine and,
// where the input can be interrupted (a terminal or pipe on Unix), waits for
// it to end.
type lineSource struct {
	lines chan line     // unbuffered: the goroutine's next line
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the goroutine has returned
	wake  func()        // interrupts a blocked read (no-op where impossible)
	wait  bool          // Close waits for done (the read can be interrupted)

	mu    sync.Mutex // guards end
	end   error      // the input's final error, once delivered
	close sync.Once
}

// line is one line of input without its line ending.
type line struct {
	text string
	err  error // io.EOF or a read error, with any partial last line in text
}

// errStopped is what a read returns once Close has interrupted it.
var errStopped = errors.New("input closed")

// newLineSource starts the reader of r.
func newLineSource(r io.Reader) *lineSource {
	in, wake, interruptible := interruptibleInput(r)
	s := &lineSource{
		lines: make(chan line),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		wake:  wake,
		wait:  interruptible,
	}
	go s.read(in)
	return s
}

func (s *lineSource) read(r io.Reader) {
	defer close(s.done)
	if rel, ok := r.(interface{ release() }); ok {
		defer rel.release()
	}
	in := bufio.NewReader(r)
	for {
		text, err := in.ReadString('\n')
		l := line{text: trimEOL(text), err: err}
		select {
		case s.lines <- l:
		case <-s.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func trimEOL(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] == '\r' {
		s = s[:len(s)-1]
	}
	return s
}

// Next returns the next line. At the end of the input it returns io.EOF
// (with a last line that had no line ending first, as a line); when ctx
// ends first, ctx's error. A line not taken because ctx ended stays for
// the next caller.
func (s *lineSource) Next(ctx context.Context) (line, error) {
	if err := ctx.Err(); err != nil {
		return line{}, err
	}
	s.mu.Lock()
	if s.end != nil {
		s.mu.Unlock()
		return line{}, s.end
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return line{}, ctx.Err()
	case <-s.done:
		return line{}, io.EOF
	case l := <-s.lines:
		if l.err == nil {
			return l, nil
		}
		end := l.err
		if errors.Is(end, errStopped) {
			end = io.EOF
		}
		s.mu.Lock()
		s.end = end
		s.mu.Unlock()
		if l.text != "" {
			return line{text: l.text}, nil
		}
		return line{}, end
	}
}

// Close stops the reader. Where its read can be interrupted it waits until
// the goroutine has returned; elsewhere (a plain file read, Windows) the
// goroutine returns as soon as its read does, delivering nothing more.
func (s *lineSource) Close() {
	s.close.Do(func() {
		close(s.stop)
		s.wake()
	})
	if s.wait {
		<-s.done
	}
}
