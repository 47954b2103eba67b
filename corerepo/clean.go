package corerepo

import (
	"sync"
	"time"

	"github.com/demiurge/demiurge/gitrepo"
)

// cleanCache remembers the live revision EnsureSaved last found with no
// local edits, for as long as a gitrepo.Watch armed before that scan stays
// quiet: until then nothing in the checkout, the refs or the storage's
// state has changed, so the scan would find the same. Any change (an
// agent's edit, a save, a switch by another process on this machine) ends
// it, and the next EnsureSaved scans again.
//
// The watch is armed only from the armAfterCalls-th call on, or once the
// Repo has been open for armDelay: on some kernels releasing an inotify
// instance costs milliseconds (at Close or at the process's exit), more
// than the one or two scans of a short process (a `demiurge run`) would
// save. A Host that serves turns reaches the count within its first turns,
// so its turns stop paying for a stat walk of the checkout.
type cleanCache struct {
	mu     sync.Mutex // serializes EnsureSaved; guards the fields below
	opened time.Time  // when the Repo was made
	calls  int        // arm calls so far: EnsureSaved calls that had no cached answer
	watch  *gitrepo.Watch
	rev    string // "" when not known clean
	closed bool   // by Close: nothing is watched any more
}

const (
	armDelay      = time.Second
	armAfterCalls = 3
)

// get returns the remembered revision while the watch is quiet.
func (c *cleanCache) get() (string, bool) {
	if c.rev == "" || c.watch == nil || !c.watch.Quiet() {
		c.rev = ""
		return "", false
	}
	return c.rev, true
}

// arm (re)arms the watch over g and reports whether it is armed; without
// it, nothing is remembered and every call scans.
func (c *cleanCache) arm(g *gitrepo.Repo) bool {
	c.calls++
	if c.closed || (c.calls < armAfterCalls && time.Since(c.opened) < armDelay) {
		return false
	}
	if c.watch == nil {
		c.watch = g.NewWatch()
	}
	return c.watch.Arm() == nil
}

// close releases the watch.
func (c *cleanCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev, c.closed = "", true
	if c.watch == nil {
		return nil
	}
	return c.watch.Close()
}

// Close releases what the Repo holds open between calls (the checkout
// watch of EnsureSaved). The Repo stays usable; EnsureSaved then scans.
func (r *Repo) Close() error { return r.clean.close() }
