package corerepo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-git/v5/plumbing"
)

// Refs of the core repository (spec host-runtime §7.3).
const (
	refLive     = "refs/demiurge/live"
	refPrevious = "refs/demiurge/previous"
	refRuns     = "refs/demiurge/runs/"
)

func runRef(id string) string { return refRuns + id }

// Refs are loose files written by this package alone, always through a
// temporary file and a rename: a reader in another process sees the old or
// the new value, never a torn one. Compare-and-swap is done under the
// repository lock (every writer holds it), and moves of several refs are
// made atomic by the transaction journal (journal.go).

// readRef returns the commit a ref names; ok is false when the ref does not
// exist. A file that does not hold a hash is an error.
func readRef(gitDir, name string) (h plumbing.Hash, ok bool, err error) {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, ioError("read ref", path, err)
	}
	s := strings.TrimSpace(string(data))
	if !plumbing.IsHash(s) {
		return plumbing.ZeroHash, false, demiurge.Errorf(demiurge.EINTERNAL, "core repository: ref %s does not hold a commit id", name)
	}
	return plumbing.NewHash(s), true, nil
}

func writeRef(gitDir, name string, h plumbing.Hash) error {
	return writeFileAtomic(filepath.Join(gitDir, filepath.FromSlash(name)), []byte(h.String()+"\n"))
}

func deleteRef(gitDir, name string) error {
	path := filepath.Join(gitDir, filepath.FromSlash(name))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ioError("delete ref", path, err)
	}
	return nil
}
