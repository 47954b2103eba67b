package turn

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
)

// admission lets Runs in until Close, and lets Close wait for the ones it
// let in.
type admission struct {
	life context.Context    // cancelled by Close: every admitted Run derives from it
	stop context.CancelFunc // cancels life

	mu      sync.Mutex // guards closed, running
	closed  bool
	running int
	idle    chan struct{} // closed once closed and no Run is in progress
}

func newAdmission() *admission {
	life, stop := context.WithCancel(context.Background())
	return &admission{life: life, stop: stop, idle: make(chan struct{})}
}

var errExecutionClosed = demiurge.Errorf(demiurge.EUNAVAILABLE, "turn execution is closed")

// enter admits one Run: the returned context ends with ctx or with Close,
// whichever comes first. leave must follow.
func (a *admission) enter(ctx context.Context) (context.Context, func(), error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, nil, errExecutionClosed
	}
	a.running++
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(a.life, cancel)
	return ctx, func() {
		unhook()
		cancel()
		a.mu.Lock()
		if a.running--; a.running == 0 && a.closed {
			close(a.idle)
		}
		a.mu.Unlock()
	}, nil
}

// Close refuses new turns (Run then fails with EUNAVAILABLE), cancels the
// running ones, those still waiting for their session included, and waits
// until every Run has returned: a started turn has its terminal event
// written by then. When ctx ends first Close returns ETIMEOUT and the
// turns still end in the background. Closing twice is harmless.
func (x *Execution) Close(ctx context.Context) error {
	a := x.adm
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		if a.running == 0 {
			close(a.idle)
		}
	}
	a.mu.Unlock()
	a.stop()
	select {
	case <-a.idle:
		return nil
	case <-ctx.Done():
		return demiurge.WrapError(demiurge.ETIMEOUT, ctx.Err(), "turn execution close: turns still running")
	}
}
