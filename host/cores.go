package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/turn"
)

// coreLoader loads cores from the home's agents directory (the core
// repository's live checkout) and pins the revision a turn runs: local
// edits are gated and saved as a revision first (corerepo EnsureSaved), and
// the live commit is the turn's core_revision. The files are read with
// their content digest before and after loading; if they differ the load is
// retried (at most three times), so a turn never runs a half-edited core.
//
// A loaded core is kept with the stat fingerprint of its files (path, size,
// mode, modification time); while the fingerprint is unchanged the next turn
// reuses the parsed core and its digest instead of reading every file again.
// Cached cores are shared read-only.
type coreLoader struct {
	home Home
	repo *corerepo.Repo

	mu    sync.Mutex // guards cache
	cache map[string]cachedCore
}

type cachedCore struct {
	stat string
	snap turn.Snapshot
}

func newCoreLoader(home Home, repo *corerepo.Repo) *coreLoader {
	return &coreLoader{home: home, repo: repo, cache: map[string]cachedCore{}}
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
	stat, err := statDir(dir)
	if err != nil {
		return turn.Snapshot{}, err
	}
	stat += ":" + rev
	l.mu.Lock()
	c, ok := l.cache[coreID]
	l.mu.Unlock()
	if ok && c.stat == stat {
		return c.snap, nil
	}
	snap, err := l.load(ctx, dir)
	if err != nil {
		return snap, err
	}
	snap.Revision = rev
	if after, err := statDir(dir); err == nil && after+":"+rev == stat {
		l.mu.Lock()
		l.cache[coreID] = cachedCore{stat: stat, snap: snap}
		l.mu.Unlock()
	}
	return snap, nil
}

func (l *coreLoader) load(ctx context.Context, dir string) (turn.Snapshot, error) {
	for range 3 {
		before, err := digestDir(dir)
		if err != nil {
			return turn.Snapshot{}, err
		}
		c, err := core.Load(dir)
		if err != nil {
			return turn.Snapshot{}, err
		}
		after, err := digestDir(dir)
		if err != nil {
			return turn.Snapshot{}, err
		}
		if before == after {
			return turn.Snapshot{Core: c, Revision: before}, nil
		}
		if err := ctx.Err(); err != nil {
			return turn.Snapshot{}, err
		}
	}
	return turn.Snapshot{}, demiurge.Errorf(demiurge.ECONFLICT, "active core changed repeatedly during turn admission")
}

// statDir fingerprints the metadata of every entry under dir.
func statDir(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00%o\x00%d\x00", filepath.ToSlash(rel), info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", demiurge.WrapError(demiurge.ECONFIG, err, "read core %s: %v", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func validCoreID(id string) error {
	if id == "" || id == "." || id == ".." || filepath.Base(id) != id {
		return demiurge.Errorf(demiurge.ECONFIG, "invalid core id %q", id)
	}
	return nil
}

// digestDir returns a short content digest of every regular file under dir
// (relative path and bytes, in path order). Symlinks are not followed.
func digestDir(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", demiurge.WrapError(demiurge.ECONFIG, err, "read core %s: %v", dir, err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		io.WriteString(h, filepath.ToSlash(rel))
		h.Write([]byte{0})
		f, err := os.Open(p)
		if err != nil {
			return "", demiurge.WrapError(demiurge.ECONFIG, err, "read core %s: %v", p, err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", demiurge.WrapError(demiurge.ECONFIG, err, "read core %s: %v", p, err)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
