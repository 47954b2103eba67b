package host

import (
	"context"

	"github.com/demiurge/demiurge/corerepo"
)

// repoOpening is the core repository of an SQLite home being opened on a
// goroutine of its own while Open goes on with the store, the lease and
// reconciliation: without a shared ledger the repository depends on none of
// them, and on two processors the two take about as long as the longer.
// Once the repository is open, the same goroutine warms the core loader
// with the cores Options.Preload names (coreLoader.warm), while Open goes
// on with the rest. The goroutine belongs to Open, which takes the
// repository and its loader with take and joins the goroutine with wait
// before it returns, or, when it fails first, with abandon, which also
// closes what was opened.
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
func (h *Host) openRepoAside(ctx context.Context, preload []string) *repoOpening {
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
			o.cores.warm(ctx, id)
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
