package store

import (
	"sync"
	"sync/atomic"

	"github.com/demiurge/demiurge"
)

// CommitObserver is told about committed events, for live views of the
// event log (the Host's session feed). Only events a transaction inserted
// are published: a batch answered from its idempotency key, or undone to a
// savepoint, publishes nothing.
type CommitObserver interface {
	// Observing reports, cheaply, whether anybody wants events now. A
	// write transaction asks once when it begins; one that began while
	// it was false collects and publishes nothing, so an idle observer
	// costs one call per transaction and no allocation.
	Observing() bool
	// Committed receives the events one transaction inserted, in seq
	// order, right after its commit and never before it. It is called on
	// the committing goroutine, one transaction at a time and in commit
	// order, while the next observed commit waits: it must not block (hand
	// the events on and return). It may keep the slice.
	Committed(events []demiurge.Event)
}

// publisher is the DB's observer slot and the lock that keeps
// publication in commit order.
type publisher struct {
	observer atomic.Pointer[observerBox]
	// mu is held across the commit and the publication of an observed
	// transaction, so two transactions' events reach the observer in the
	// order they committed.
	mu sync.Mutex
}

type observerBox struct{ o CommitObserver }

// SetCommitObserver installs o as the observer of every later write
// transaction (nil removes it). At most one observer is installed; a
// second call replaces the first.
func (db *DB) SetCommitObserver(o CommitObserver) {
	if o == nil {
		db.pub.observer.Store(nil)
		return
	}
	db.pub.observer.Store(&observerBox{o})
}

// observing is asked once per write transaction.
func (p *publisher) observing() bool {
	b := p.observer.Load()
	return b != nil && b.o.Observing()
}

// observe keeps the events an append inserted, when the transaction is
// observed.
func (t *wtx) observe(inserted []demiurge.Event) {
	if t.observing {
		t.published = append(t.published, inserted...)
	}
}

// commit commits the transaction and publishes what it inserted.
func (t *wtx) commit() error {
	if len(t.published) == 0 {
		return t.tx.Commit()
	}
	p := &t.db.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := t.tx.Commit(); err != nil {
		return err
	}
	if b := p.observer.Load(); b != nil {
		b.o.Committed(t.published)
	}
	return nil
}
