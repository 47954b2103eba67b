package main

import (
	"strings"
	"sync"
)

// watchLimit bounds the output a watcher keeps; a child's output beyond it
// is only needed for error messages, which show the start.
const watchLimit = 64 << 10

// watcher is a child's stdout or stderr: it keeps the output (bounded) for
// error messages and closes found once needle has appeared in it. exec's
// copying goroutine writes while the driver reads, so it is locked.
type watcher struct {
	needle string
	found  chan struct{}

	mu   sync.Mutex // guards buf, seen
	buf  strings.Builder
	seen bool
}

func newWatcher(needle string) *watcher {
	return &watcher{needle: needle, found: make(chan struct{})}
}

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := watchLimit - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	// The needle is searched in what was kept; output past the limit is
	// not expected before the reply.
	if !w.seen && w.needle != "" && strings.Contains(w.buf.String(), w.needle) {
		w.seen = true
		close(w.found)
	}
	return len(p), nil
}

// String returns the output kept so far.
func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
