package turn

import (
	"context"
	"sync"
)

// sessionQueue serialises turns per session inside one process, first come
// first served. Different sessions never wait on each other; idle entries are
// removed so the map stays as small as the set of busy sessions.
type sessionQueue struct {
	mu    sync.Mutex // guards lines
	lines map[string]*line
}

type line struct {
	busy    bool
	waiters []chan struct{} // FIFO; closed when the waiter is granted the session
}

func newSessionQueue() *sessionQueue { return &sessionQueue{lines: map[string]*line{}} }

// acquire blocks until the caller holds sessionID or ctx is done. The returned
// release must be called exactly once.
func (q *sessionQueue) acquire(ctx context.Context, sessionID string) (release func(), err error) {
	q.mu.Lock()
	l := q.lines[sessionID]
	if l == nil {
		l = &line{}
		q.lines[sessionID] = l
	}
	if !l.busy {
		l.busy = true
		q.mu.Unlock()
		return q.releaser(sessionID), nil
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	q.mu.Unlock()

	select {
	case <-ch:
		return q.releaser(sessionID), nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		select {
		case <-ch: // granted while we gave up: pass it on
			q.handOffLocked(sessionID)
		default:
			for i, w := range l.waiters {
				if w == ch {
					l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
					break
				}
			}
		}
		return nil, ctx.Err()
	}
}

func (q *sessionQueue) releaser(sessionID string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.handOffLocked(sessionID)
			q.mu.Unlock()
		})
	}
}

// handOffLocked grants the session to the next waiter, or frees it.
func (q *sessionQueue) handOffLocked(sessionID string) {
	l := q.lines[sessionID]
	if l == nil {
		return
	}
	if len(l.waiters) == 0 {
		delete(q.lines, sessionID)
		return
	}
	next := l.waiters[0]
	l.waiters = l.waiters[1:]
	close(next)
}
