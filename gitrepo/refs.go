package gitrepo

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
)

// Refs the storage itself moves.
const (
	RefLive     = "refs/demiurge/live"     // the live revision
	RefPrevious = "refs/demiurge/previous" // the live revision before the last switch
)

// Refs are loose files written by this package alone, always through a
// temporary file and a rename: a reader in another process sees the old or
// the new value, never a torn one. Compare-and-swap is done under the
// repository lock (every writer holds it), and moves of several refs are
// made atomic by the transaction journal (journal.go).

// Ref returns the commit ref name names; ok is false when the ref does not
// exist. A file that does not hold a commit id is EINTERNAL.
func (r *Repo) Ref(name string) (h coretree.Hash, ok bool, err error) {
	return readRef(r.paths.GitDir, name)
}

// SetRef points ref name at commit h. Callers other than Switch hold the
// lock and set refs of their own (an evolve run's proposal), never
// RefLive or RefPrevious.
func (r *Repo) SetRef(name string, h coretree.Hash) error {
	return writeRef(r.paths.GitDir, name, h)
}

// DeleteRef removes ref name; a missing ref is no error.
func (r *Repo) DeleteRef(name string) error {
	path := filepath.Join(r.paths.GitDir, filepath.FromSlash(name))
	if err := os.Remove(path); err != nil && !isNotExist(err) {
		return IOError("delete ref", path, err)
	}
	return nil
}

func readRef(gitDir, name string) (coretree.Hash, bool, error) {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	data, ok, err := readSmallFile(path)
	if err != nil || !ok {
		return coretree.Hash{}, false, err
	}
	h, ok := coretree.ParseHash(strings.TrimSpace(string(data)))
	if !ok {
		return coretree.Hash{}, false, demiurge.Errorf(demiurge.EINTERNAL, "core repository: ref %s does not hold a commit id", name)
	}
	return h, true, nil
}

func writeRef(gitDir, name string, h coretree.Hash) error {
	return WriteFile(filepath.Join(gitDir, filepath.FromSlash(name)), []byte(h.String()+"\n"))
}
