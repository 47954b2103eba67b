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

// An urgent waiter takes the writer before normal waiters that came
// first; waiters of one class keep their order; the lock is free after.
func TestWriterLockUrgentFirst(t *testing.T) {
	var l writerLock
	l.Lock()
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	take := func(name string, urgent bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.lock(urgent)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			l.Unlock()
		}()
	}
	take("n1", false)
	l.queued(t, 1, 0)
	take("n2", false)
	l.queued(t, 2, 0)
	take("u1", true)
	l.queued(t, 2, 1)
	take("u2", true)
	l.queued(t, 2, 2)
	l.Unlock()
	wg.Wait()
	if got := strings.Join(order, " "); got != "u1 u2 n1 n2" {
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
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	take := func(name string, urgent bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.lock(urgent)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			l.Unlock()
		}()
	}
	take("n1", false)
	l.queued(t, 1, 0)
	for i := range urgentStreak + 2 {
		take(fmt.Sprintf("u%d", i+1), true)
		l.queued(t, 1, i+1)
	}
	l.Unlock()
	wg.Wait()
	want := "u1 u2 u3 u4 n1 u5 u6"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("order %q, want %q", got, want)
	}
}
