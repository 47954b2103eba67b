package process

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
)

// Handle is a command started with Start. Its methods are safe for
// concurrent use.
type Handle struct {
	spawnID string
	pid     int
	marker  string

	cancelOnce sync.Once
	cancelReq  chan struct{} // closed by the first cancellation request

	done chan struct{} // closed once res and err are final
	res  Result
	err  error
}

func newHandle(spawnID string) *Handle {
	return &Handle{spawnID: spawnID, cancelReq: make(chan struct{}), done: make(chan struct{})}
}

// SpawnID returns the Host-unique id of this start ("proc_…").
func (h *Handle) SpawnID() string { return h.spawnID }

// PID returns the process id of the command's own process, which is also
// its process group and session id.
func (h *Handle) PID() int { return h.pid }

// StartMarker returns the OS start marker of the command's process (see
// StartMarker); store it beside the pid for KillGroupIfSame.
func (h *Handle) StartMarker() string { return h.marker }

// Wait waits until the command's tree is gone and its output drained, and
// returns the Result; every caller gets the same one. When ctx ends first,
// Wait returns ECANCELED and leaves the command running. A non-nil error
// with a finished command means its tree could not be fully terminated
// (EINTERNAL); the Result is still complete.
func (h *Handle) Wait(ctx context.Context) (Result, error) {
	select {
	case <-h.done:
		return h.res, h.err
	case <-ctx.Done():
		return Result{}, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "stopped waiting for process %s", h.spawnID)
	}
}

// Cancel terminates the command's tree (one SIGTERM, KillGrace, SIGKILL,
// however many callers) and returns the Result, the same for every caller
// and for Wait. A command that had already finished is not signalled and
// reports Cancelled false. ctx bounds only the waiting.
func (h *Handle) Cancel(ctx context.Context) (Result, error) {
	h.requestCancel()
	return h.Wait(ctx)
}

func (h *Handle) requestCancel() {
	h.cancelOnce.Do(func() { close(h.cancelReq) })
}

// finish publishes the outcome.
func (h *Handle) finish(res Result, err error) {
	h.res, h.err = res, err
	close(h.done)
}
