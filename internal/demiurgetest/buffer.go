package demiurgetest

import (
	"bytes"
	"sync"
)

// Buffer is an output stream several goroutines may write at once (the
// stdout of an in-process CLI run, a child's pipe), read when they are done
// or while they run.
type Buffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
