package host

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/turn"
)

// coreLoader loads cores from the home's agents directory (the core
// repository's live checkout) and pins the revision a turn runs: local
// edits are gated and saved as a revision first (corerepo EnsureSaved), and
// the live commit is the turn's core_revision. The core is read with
// core.LoadSaved: the revision passed the repository's gates. A clean checkout is the
// commit's tree, so the revision names the files: a parsed core is kept per
// core and revision and reused while EnsureSaved reports the same one,
// without reading or fingerprinting the files again. A core is parsed only
// for a revision not seen before, and kept only if the checkout was still
// that revision after parsing; otherwise the load is retried (at most three
// times), so a turn never runs a half-edited core. Cached cores are shared
// read-only. warm parses a core the same way ahead of its first Load (a
// Host's Options.Preload), which then takes it if the revision still is
// the one warm saw.
type coreLoader struct {
	home Home
	repo *corerepo.Repo
	// python resolves the interpreter of runtime.python: a core with a
	// module.py slot or tool fails to load without one (nil: not checked).
	python func() (string, error)

	mu    sync.Mutex // guards cache and warmed
	cache map[string]turn.Snapshot
	// warmed holds what warm parsed, by core: the revision's files,
	// parsed between two EnsureSaved calls that reported it, before
	// runtime.python was checked.
	warmed map[string]turn.Snapshot
}

func newCoreLoader(home Home, repo *corerepo.Repo) *coreLoader {
	return &coreLoader{home: home, repo: repo, cache: map[string]turn.Snapshot{}, warmed: map[string]turn.Snapshot{}}
}

// warm parses coreID ahead of its first Load, as Load parses: between two
// EnsureSaved calls that report the same revision, and returns it (nil
// when it did not). Load then takes the parsed core once EnsureSaved
// reports that revision again, and only checks its interpreter. Whatever
// fails is left for Load to find and report.
func (l *coreLoader) warm(ctx context.Context, coreID string) *core.Core {
	if validCoreID(coreID) != nil {
		return nil
	}
	rev, err := l.repo.EnsureSaved(ctx)
	if err != nil {
		return nil
	}
	c, err := core.LoadSaved(l.home.CoreDir(coreID))
	if err != nil {
		return nil
	}
	if after, err := l.repo.EnsureSaved(ctx); err != nil || after != rev {
		return nil
	}
	l.mu.Lock()
	l.warmed[coreID] = turn.Snapshot{Core: c, Revision: rev}
	l.mu.Unlock()
	return c
}

func (l *coreLoader) Load(ctx context.Context, coreID string) (turn.Snapshot, error) {
	if err := validCoreID(coreID); err != nil {
		return turn.Snapshot{}, err
	}
	dir := l.home.CoreDir(coreID)
	if _, err := os.Stat(filepath.Join(dir, "agent.yaml")); err != nil {
		return turn.Snapshot{}, demiurge.Errorf(demiurge.ECONFIG, "unknown core %q: %s has no agent.yaml", coreID, dir)
	}
	rev, err := l.repo.EnsureSaved(ctx)
	if err != nil {
		return turn.Snapshot{}, err
	}
	for range 3 {
		l.mu.Lock()
		snap, ok := l.cache[coreID]
		warmed, wok := l.warmed[coreID]
		delete(l.warmed, coreID)
		l.mu.Unlock()
		if ok && snap.Revision == rev {
			return snap, nil
		}
		// A core warm parsed at this revision is this revision's core: the
		// checkout was the revision before and after the parse, and is
		// again now.
		parse := !wok || warmed.Revision != rev
		c, after := warmed.Core, rev
		if parse {
			if c, err = core.LoadSaved(dir); err != nil {
				return turn.Snapshot{}, err
			}
		}
		if l.python != nil && c.HasPython() {
			if _, err := l.python(); err != nil {
				return turn.Snapshot{}, err
			}
		}
		if parse {
			if after, err = l.repo.EnsureSaved(ctx); err != nil {
				return turn.Snapshot{}, err
			}
		}
		if after == rev {
			snap := turn.Snapshot{Core: c, Revision: rev}
			l.mu.Lock()
			l.cache[coreID] = snap
			l.mu.Unlock()
			return snap, nil
		}
		if err := ctx.Err(); err != nil {
			return turn.Snapshot{}, err
		}
		rev = after
	}
	return turn.Snapshot{}, demiurge.Errorf(demiurge.ECONFLICT, "active core changed repeatedly during turn admission")
}

func validCoreID(id string) error {
	if id == "" || id == "." || id == ".." || filepath.Base(id) != id {
		return demiurge.Errorf(demiurge.ECONFIG, "invalid core id %q", id)
	}
	return nil
}
