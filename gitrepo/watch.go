package gitrepo

import (
	"path/filepath"
	"sync"
)

// Watch says whether the live checkout and the repository's refs and state
// files may have changed since it was last armed, so that a caller that
// found them clean can skip the next stat walk of the checkout.
//
// On Linux it is an inotify instance over every directory of the checkout,
// refs/ and the storage's state directory: the kernel queues an event
// during the system call that changes a file, so once Arm has returned,
// every later change is in the queue before Quiet drains it. Quiet is
// false whenever it cannot be sure: before the first Arm, after any event
// (our own writes included), after a queue overflow, after any error, and
// always on other systems. Changes the kernel does not report (writes
// through a shared memory mapping, edits on another machine of a network
// file system) are not seen; the checkout is the Host's own directory.
//
// A Watch is safe for concurrent use; its owner closes it.
type Watch struct {
	mu    sync.Mutex // guards the fields below and the inotify descriptor
	roots []watchRoot
	state watchState
}

// watchRoot is one directory to watch, with its subdirectories or alone.
type watchRoot struct {
	dir     string
	subdirs bool
}

// NewWatch returns an unarmed watch over the live checkout, the refs and
// the state directory of r.
func (r *Repo) NewWatch() *Watch {
	return &Watch{roots: []watchRoot{
		{dir: r.paths.Checkout, subdirs: true},
		{dir: filepath.Join(r.paths.GitDir, "refs"), subdirs: true},
		{dir: r.paths.stateDir()},
	}}
}

// Arm starts watching afresh: Quiet answers for changes after Arm
// returns. A failure leaves the watch unarmed (Quiet false).
func (w *Watch) Arm() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state.arm(w.roots)
}

// Quiet reports whether nothing watched has changed since the last Arm.
func (w *Watch) Quiet() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state.quiet()
}

// Close releases the watch; Quiet is false afterwards.
func (w *Watch) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state.close()
}
