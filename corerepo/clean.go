package corerepo

import (
	"sync"

	"github.com/demiurge/demiurge/gitrepo"
)

// cleanCache remembers the live revision EnsureSaved last found with no
// local edits, for as long as a gitrepo.Watch armed before that scan stays
// quiet: until then nothing in the checkout, the refs or the storage's
// state has changed, so the scan would find the same. Any change (an
// agent's edit, a save, a switch by another process on this machine) ends
// it, and the next EnsureSaved scans again.
//
// Only a Repo opened with Options.WatchCheckout watches: on some kernels
// releasing an inotify instance costs milliseconds (at Close or at the
// process's exit), more than the few scans of a short process (a
// `demiurge run`) would save. A Host that serves turns watches, so its
// turns stop paying for a stat walk of the checkout.
type cleanCache struct {
	mu      sync.Mutex // serializes EnsureSaved; guards the fields below
	enabled bool       // Options.WatchCheckout
	watch   *gitrepo.Watch
	rev     string // "" when not known clean
	closed  bool   // by Close: nothing is watched any more
}

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
	if !c.enabled || c.closed {
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
