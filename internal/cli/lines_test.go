package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func pipeSource(t *testing.T) (*lineSource, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := newLineSource(r)
	t.Cleanup(func() {
		s.Close()
		w.Close()
		r.Close()
	})
	return s, w
}

func TestLineSourceLinesThenEOF(t *testing.T) {
	s := newLineSource(strings.NewReader("one\r\ntwo\nlast without newline"))
	defer s.Close()
	ctx := context.Background()
	for _, want := range []string{"one", "two", "last without newline"} {
		l, err := s.Next(ctx)
		if err != nil || l.text != want {
			t.Fatalf("Next = %q, %v; want %q", l.text, err, want)
		}
	}
	for range 2 { // the end stays the end
		if _, err := s.Next(ctx); !errors.Is(err, io.EOF) {
			t.Fatalf("Next after the last line: %v, want EOF", err)
		}
	}
}

// A caller whose context ends stops waiting, and the line it did not take
// goes to the next caller: nothing reads on after its question.
func TestLineSourceCancelledWaitLeavesTheLine(t *testing.T) {
	s, w := pipeSource(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled context: %v", err)
	}
	w.WriteString("answer\n")
	l, err := s.Next(context.Background())
	if err != nil || l.text != "answer" {
		t.Fatalf("next caller got %q, %v; want the line", l.text, err)
	}
}

// Close ends the reader goroutine even while it waits for input that never
// comes (a terminal or pipe nobody writes to), and later calls see EOF.
func TestLineSourceCloseStopsABlockedRead(t *testing.T) {
	s, _ := pipeSource(t)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the blocked reader")
	}
	select {
	case <-s.done:
	default:
		t.Fatal("Close returned before the reader goroutine")
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v, want EOF", err)
	}
}
