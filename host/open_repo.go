package host

import (
	"context"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/slot"
	"github.com/demiurge/demiurge/starlark"
)

// repoOpening is the core repository of an SQLite home being opened on a
// goroutine of its own while Open goes on with the store, the lease and
// reconciliation: without a shared ledger the repository depends on none of
// them, and on two processors the two take about as long as the longer.
// Once the repository is open, the same goroutine warms the core loader
// with the cores Options.Preload names (coreLoader.warm) and compiles
// their slots' Starlark modules into the Host's interpreter (warmSlots),
// while Open goes on with the rest. The goroutine belongs to Open, which
// takes the repository and its loader with take and joins the goroutine
// with wait before it returns, or, when it fails first, with abandon,
// which also closes what was opened.
type repoOpening struct {
	ready chan struct{} // closed once repo, cores and err are set
	done  chan struct{} // closed when the goroutine returns
	repo  *corerepo.Repo
	cores *coreLoader
	err   error
	taken bool
}

// openRepoAside starts opening the repository of an SQLite home and then
// warming preload.
func (h *Host) openRepoAside(ctx context.Context, preload []string, interp *starlark.Runtime) *repoOpening {
	o := &repoOpening{ready: make(chan struct{}), done: make(chan struct{})}
	opts := h.repoOptions(nil, "")
	go func() {
		defer close(o.done)
		o.repo, o.err = openRepoWith(ctx, h.home.Dir, opts)
		if o.err == nil {
			o.cores = newCoreLoader(h.home, o.repo)
		}
		close(o.ready)
		if o.err != nil {
			return
		}
		for _, id := range preload {
			if c := o.cores.warm(ctx, id); c != nil {
				warmSlots(interp, c)
			}
		}
	}()
	return o
}

// take waits for the repository and hands it over with its core loader;
// the goroutine may still be warming the loader.
func (o *repoOpening) take() (*corerepo.Repo, *coreLoader, error) {
	<-o.ready
	o.taken = true
	return o.repo, o.cores, o.err
}

// wait joins the goroutine.
func (o *repoOpening) wait() { <-o.done }

// abandon joins the goroutine and closes a repository take did not hand
// over.
func (o *repoOpening) abandon() {
	<-o.done
	if !o.taken && o.repo != nil {
		_ = o.repo.Close()
	}
}

// warmSlots compiles the Starlark modules of c's slots into interp
// (slot.Precompile), so that the turn's slot runs find them compiled. A
// module that cannot be read or compiled is left for its slot's run to
// report.
func warmSlots(interp *starlark.Runtime, c *core.Core) {
	for _, phase := range core.Phases {
		for _, s := range c.Slots[phase] {
			if strings.HasSuffix(s.ModulePath, ".star") {
				_ = slot.Precompile(interp, demiurge.SlotSpec{ModulePath: s.ModulePath})
			}
		}
	}
}
