package turn

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// stuckCores holds every Run in core loading until released or until its
// context ends, whichever it is told to wait for.
type stuckCores struct {
	entered   chan struct{}
	release   chan struct{}
	ignoreCtx bool
	left      *atomic.Int32 // Loads that have returned; nil: not counted
}

func (c stuckCores) Load(ctx context.Context, _ string) (Snapshot, error) {
	c.entered <- struct{}{}
	if c.left != nil {
		defer c.left.Add(1)
	}
	if c.ignoreCtx {
		<-c.release
		return Snapshot{}, demiurge.Errorf(demiurge.ECONFIG, "released")
	}
	select {
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	case <-c.release:
		return Snapshot{}, demiurge.Errorf(demiurge.ECONFIG, "released")
	}
}

// Close cancels the Runs in progress, waits for them, and refuses new ones.
func TestCloseCancelsAndWaitsForRuns(t *testing.T) {
	cores := stuckCores{entered: make(chan struct{}), release: make(chan struct{}), left: new(atomic.Int32)}
	x := New(Deps{Cores: cores})
	returned := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := x.Run(context.Background(), Request{Text: "hi"})
			returned <- err
		}()
		<-cores.entered
	}
	if err := x.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Close waited for both turns: their cancelled core loads have returned.
	// (Run itself returns a moment after the turn is done with, so the
	// goroutines' sends are awaited, not polled.)
	if n := cores.left.Load(); n != 2 {
		t.Fatalf("Close returned while %d running turns were still in progress", 2-n)
	}
	for range 2 {
		if err := <-returned; err == nil {
			t.Fatal("a cancelled Run reported success")
		}
	}
	if _, err := x.Run(context.Background(), Request{Text: "hi"}); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("Run after Close: %v, want EUNAVAILABLE", err)
	}
	if err := x.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Close gives up waiting when its context ends; the Run still ends later.
func TestCloseIsBoundedByItsContext(t *testing.T) {
	cores := stuckCores{entered: make(chan struct{}), release: make(chan struct{}), ignoreCtx: true}
	x := New(Deps{Cores: cores})
	returned := make(chan error, 1)
	go func() {
		_, err := x.Run(context.Background(), Request{Text: "hi"})
		returned <- err
	}()
	<-cores.entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := x.Close(ctx); demiurge.ErrorCode(err) != demiurge.ETIMEOUT {
		t.Fatalf("Close with a stuck turn: %v, want ETIMEOUT", err)
	}
	close(cores.release)
	<-returned
	if err := x.Close(context.Background()); err != nil {
		t.Fatalf("Close after the turn ended: %v", err)
	}
}
