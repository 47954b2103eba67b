package store

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// queued waits until l has n normal and u urgent waiters.
func (l *writerLock) queued(t *testing.T, n, u int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		ok := len(l.normal) == n && len(l.urgent) == u
		l.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiters never queued (want %d normal, %d urgent)", n, u)
		}
		time.Sleep(time.Millisecond)
	}
}

// waiter is one writer to queue on a held lock.
type waiter struct {
	name   string
	urgent bool
}

// serveOrder queues ws on l (held by the caller) one at a time, in order,
// releases l and returns the order in which they got the writer.
func serveOrder(t *testing.T, l *writerLock, ws ...waiter) string {
	t.Helper()
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	normal, urgent := 0, 0
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.lock(w.urgent)
			mu.Lock()
			order = append(order, w.name)
			mu.Unlock()
			l.Unlock()
		}()
		if w.urgent {
			urgent++
		} else {
			normal++
		}
		l.queued(t, normal, urgent)
	}
	l.Unlock()
	wg.Wait()
	return strings.Join(order, " ")
}

// An urgent waiter takes the writer before normal waiters that came
// first; waiters of one class keep their order; the lock is free after.
func TestWriterLockUrgentFirst(t *testing.T) {
	var l writerLock
	l.Lock()
	got := serveOrder(t, &l, waiter{"n1", false}, waiter{"n2", false}, waiter{"u1", true}, waiter{"u2", true})
	if got != "u1 u2 n1 n2" {
		t.Fatalf("order %q, want u1 u2 n1 n2", got)
	}
	l.mu.Lock()
	free := !l.held
	l.mu.Unlock()
	if !free {
		t.Fatal("the writer is still held after every waiter unlocked")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("unlock of an unlocked writer did not panic")
		}
	}()
	l.Unlock()
}

// Urgent writers in a row never starve a normal one: after urgentStreak
// of them pass it, it goes next.
func TestWriterLockNormalNotStarved(t *testing.T) {
	var l writerLock
	l.Lock()
	ws := []waiter{{"n1", false}}
	var want []string
	for i := range urgentStreak + 2 {
		name := fmt.Sprintf("u%d", i+1)
		ws = append(ws, waiter{name, true})
		want = append(want, name)
	}
	want = append(want[:urgentStreak], append([]string{"n1"}, want[urgentStreak:]...)...)
	if got := serveOrder(t, &l, ws...); got != strings.Join(want, " ") {
		t.Fatalf("order %q, want %q", got, strings.Join(want, " "))
	}
}
