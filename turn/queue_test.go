package turn

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestSessionQueueFIFO(t *testing.T) {
	q := newSessionQueue()
	release, err := q.acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, err := q.acquire(context.Background(), "s")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			rel()
		}()
		// Let waiter i enqueue before waiter i+1.
		waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.lines["s"].waiters) == i+1 })
	}
	release()
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v, want FIFO", order)
		}
	}
	if len(q.lines) != 0 {
		t.Fatalf("idle entries kept: %d", len(q.lines))
	}
}

func TestSessionQueueOtherSessionsDoNotWait(t *testing.T) {
	q := newSessionQueue()
	rel, _ := q.acquire(context.Background(), "a")
	defer rel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	relB, err := q.acquire(ctx, "b")
	if err != nil {
		t.Fatalf("session b waited on a: %v", err)
	}
	relB()
}

func TestSessionQueueCancelledWaiterLeaves(t *testing.T) {
	q := newSessionQueue()
	rel, _ := q.acquire(context.Background(), "s")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := q.acquire(ctx, "s")
		done <- err
	}()
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.lines["s"].waiters) == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled waiter acquired the session")
	}
	rel()
	// The session is free again: the cancelled waiter did not keep it.
	rel2, err := q.acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	rel2()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never became true")
		}
		time.Sleep(time.Millisecond)
	}
}
