package host

import (
	"context"

	"github.com/demiurge/demiurge/corerepo"
)

// repoOpening is the core repository of an SQLite home being opened on a
// goroutine of its own while Open goes on with the store, the lease and
// reconciliation: without a shared ledger the repository depends on none of
// them, and on two processors the two take about as long as the longer.
// The goroutine belongs to Open, which joins it with take, or, when it
// fails first, with abandon, which also closes what was opened.
type repoOpening struct {
	done  chan struct{}
	repo  *corerepo.Repo
	err   error
	taken bool
}

// openRepoAside starts opening the repository of an SQLite home.
func (h *Host) openRepoAside(ctx context.Context) *repoOpening {
	o := &repoOpening{done: make(chan struct{})}
	opts := h.repoOptions(nil, "")
	go func() {
		defer close(o.done)
		o.repo, o.err = openRepoWith(ctx, h.home.Dir, opts)
	}()
	return o
}

// take waits for the repository and hands it over.
func (o *repoOpening) take() (*corerepo.Repo, error) {
	<-o.done
	o.taken = true
	return o.repo, o.err
}

// abandon waits for the goroutine and closes a repository take did not
// hand over.
func (o *repoOpening) abandon() {
	<-o.done
	if !o.taken && o.repo != nil {
		_ = o.repo.Close()
	}
}
