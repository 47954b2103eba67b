package store

import "sync"

// writerLock serialises the write transactions of one DB, like a mutex,
// but hands the writer to an urgent waiter before any other: an accept a
// platform waits on (a webhook's 202) should not queue behind the
// transactions of the turns already running. Urgent waiters never starve
// the others: after urgentStreak urgent hand-overs in a row, a waiting
// normal writer (a heartbeat, a lease renewal) goes next. Among waiters of
// one class the order is first come, first served. The zero value is
// unlocked.
type writerLock struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{}
	normal []chan struct{}
	streak int // urgent hand-overs since a normal waiter was last served
}

// urgentStreak bounds how many urgent writers in a row pass a waiting
// normal one.
const urgentStreak = 4

// Lock takes the writer, after every urgent waiter.
func (l *writerLock) Lock() { l.lock(false) }

// LockUrgent takes the writer before every waiter that called Lock.
func (l *writerLock) LockUrgent() { l.lock(true) }

func (l *writerLock) lock(urgent bool) {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return
	}
	turn := make(chan struct{})
	if urgent {
		l.urgent = append(l.urgent, turn)
	} else {
		l.normal = append(l.normal, turn)
	}
	l.mu.Unlock()
	<-turn // the unlocker passed the writer on: held stays true
}

// Unlock passes the writer to the next waiter, urgent ones first, or
// releases it.
func (l *writerLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var next chan struct{}
	switch {
	case len(l.urgent) > 0 && (len(l.normal) == 0 || l.streak < urgentStreak):
		next, l.urgent = l.urgent[0], l.urgent[1:]
		l.streak++
	case len(l.normal) > 0:
		next, l.normal = l.normal[0], l.normal[1:]
		l.streak = 0
	default:
		if !l.held {
			panic("store: unlock of an unlocked writer")
		}
		l.held = false
		return
	}
	close(next)
}
