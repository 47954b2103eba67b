package host

import (
	"context"
	"sync"
)

// loops owns the Host's background goroutines (delivery retries, restart
// recovery, the scheduler): each runs until the Host closes, and Close
// waits for all of them.
type loops struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newLoops() *loops {
	ctx, cancel := context.WithCancel(context.Background())
	return &loops{ctx: ctx, cancel: cancel}
}

// goRun starts fn on a goroutine the loops own.
func (l *loops) goRun(fn func(ctx context.Context)) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		fn(l.ctx)
	}()
}

// stop cancels every loop and waits for them to return.
func (l *loops) stop() {
	l.cancel()
	l.wg.Wait()
}
