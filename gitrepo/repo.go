package gitrepo

import (
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/internal/filelock"
)

// Options configure a Repo.
type Options struct {
	// Now is the clock for commit times and index stamps; default
	// time.Now.
	Now func() time.Time
	// CrashPoint, when set, is called at named points of Initialize and
	// Switch ("init-after-commit", "init-before-live", "after-journal",
	// "after-live", "after-previous", "checkout-first-file",
	// "after-checkout"): the crash tests make it kill the process there
	// to prove recovery.
	CrashPoint func(point string)
}

// Repo is the storage of one core repository. Its methods are safe for
// concurrent use; those that change refs or the live checkout expect the
// caller to hold the lock (Begin), which excludes other mutations in this
// process and across processes.
type Repo struct {
	paths   Paths
	objects *objects
	now     func() time.Time
	crash   func(string)
}

// New returns the storage at paths without touching the disk: for a
// repository that may not exist yet (Create, Initialize). Open opens an
// existing one.
func New(paths Paths, opts Options) *Repo {
	r := &Repo{paths: paths, objects: newObjects(paths.GitDir), now: opts.Now, crash: opts.CrashPoint}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// Open opens the existing repository of paths and resolves a transaction
// an earlier process left interrupted (when no other process holds the
// lock). A missing repository is ENOTFOUND "core repository not found:
// <git dir>".
func Open(paths Paths, opts Options) (*Repo, error) {
	if !Exists(paths.GitDir) {
		return nil, demiurge.Errorf(demiurge.ENOTFOUND, "core repository not found: %s", paths.GitDir)
	}
	r := New(paths, opts)
	if r.JournalPending() {
		if l, err := filelock.TryLock(paths.Lock); err == nil {
			err := r.recover()
			l.Unlock()
			if err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// Paths returns the layout the repository was opened with.
func (r *Repo) Paths() Paths { return r.paths }

// Create makes the bare repository (config and HEAD, no hooks) unless it
// exists. The caller holds the lock.
func (r *Repo) Create() error { return initBare(r.paths.GitDir) }

// Live returns the live revision. ECONFLICT (the consistency refusal)
// when the live ref is missing.
func (r *Repo) Live() (coretree.Hash, error) {
	h, ok, err := readRef(r.paths.GitDir, RefLive)
	if err != nil {
		return coretree.Hash{}, err
	}
	if !ok {
		return coretree.Hash{}, consistencyError([]Finding{{Code: CodeLiveRefMissing, Message: "live core ref " + RefLive + " is missing"}})
	}
	return h, nil
}

// Previous returns the live revision before the last switch; ok is false
// when none is recorded.
func (r *Repo) Previous() (h coretree.Hash, ok bool, err error) {
	return readRef(r.paths.GitDir, RefPrevious)
}

// Commit reads commit h. EINTERNAL when the store lacks it.
func (r *Repo) Commit(h coretree.Hash) (Commit, error) { return r.objects.commit(h) }

// Files returns the files of commit h. The tree may be shared with other
// callers: never modify it.
func (r *Repo) Files(h coretree.Hash) (coretree.Tree, error) { return r.objects.files(h) }

// Blob reads the content of blob h.
func (r *Repo) Blob(h coretree.Hash) ([]byte, error) { return r.objects.blob(h) }

// StoreTree writes the blobs of content (the new files, as Scan.Proposed
// returns them) and the tree of files, and returns the tree's id. Every
// blob of files not in content must be stored already.
func (r *Repo) StoreTree(files coretree.Tree, content map[string][]byte) (coretree.Hash, error) {
	r.objects.beginBatch()
	h, err := r.storeTree(files, content)
	if ferr := r.objects.flush(); err == nil && ferr != nil {
		return coretree.Hash{}, ferr
	}
	return h, err
}

func (r *Repo) storeTree(files coretree.Tree, content map[string][]byte) (coretree.Hash, error) {
	for p, data := range content {
		h, err := r.objects.writeBlob(data)
		if err != nil {
			return coretree.Hash{}, err
		}
		if h != files[p].Hash {
			return coretree.Hash{}, demiurge.Errorf(demiurge.EINTERNAL, "core repository: hash of %s changed while it was stored", p)
		}
	}
	h, err := r.objects.writeTree(files)
	return coretree.Hash(h), err
}

// WriteCommit stores a commit of tree with the given parents and message,
// made now by the Host's identity, and returns its id. No ref moves.
func (r *Repo) WriteCommit(tree coretree.Hash, parents []coretree.Hash, message string) (coretree.Hash, error) {
	return r.objects.writeCommit(tree, parents, message, r.now())
}

// Initialize commits files (with the blobs of content) as the first live
// revision of a new repository, and returns it. The checkout head and an
// index naming the files without stat facts are written first and the
// live ref last, so a crash before the ref leaves a repository whose live
// ref is missing, which a new Initialize starts over; and the first scan
// hashes the checkout and sees every difference from files. The caller
// holds the lock on a repository it made (Create).
func (r *Repo) Initialize(files coretree.Tree, content map[string][]byte, message string) (coretree.Hash, error) {
	// The blobs, trees and commit go into one pack (pack.go).
	r.objects.beginBatch()
	tree, err := r.storeTree(files, content)
	var c coretree.Hash
	if err == nil {
		c, err = r.WriteCommit(tree, nil, message)
	}
	if ferr := r.objects.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return coretree.Hash{}, err
	}
	r.crashPoint("init-after-commit")
	if err := r.writeCheckoutHead(c); err != nil {
		return coretree.Hash{}, err
	}
	if err := r.recordLive(c, nil); err != nil {
		return coretree.Hash{}, err
	}
	r.crashPoint("init-before-live")
	if err := writeRef(r.paths.GitDir, RefLive, c); err != nil {
		return coretree.Hash{}, err
	}
	return c, nil
}
