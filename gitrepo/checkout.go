package gitrepo

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/demiurge/demiurge/coretree"
)

// LiveCheckout is the live checkout with its index.
func (r *Repo) LiveCheckout() Checkout {
	return Checkout{Root: r.paths.Checkout, Index: r.paths.liveIndex()}
}

// Sync makes the checkout co hold exactly the files of commit target
// (files not in it are removed, differing ones rewritten) and records its
// index. It is idempotent: recovery reruns it.
func (r *Repo) Sync(co Checkout, target coretree.Hash) error {
	res, err := r.Scan(co, target)
	if err != nil {
		return err
	}
	return r.Restore(co, res)
}

// Restore undoes the changes of a scan of co and records its index: co
// then holds exactly the files of the scanned commit.
func (r *Repo) Restore(co Checkout, res *Scan) error {
	written, err := r.restore(co.Root, res)
	if err != nil {
		return err
	}
	known := make(map[string]diskFile, len(res.files)+len(written))
	maps.Copy(known, res.files)
	maps.Copy(known, written)
	return writeIndex(co.Index, indexFor(res.Head, res.Base, known, r.now()))
}

// Record records that the checkout co holds commit head, whose files are
// files, committed from what the scan res found there: its index, with
// the stat facts res gathered (nil: none, the next scan hashes every
// file).
func (r *Repo) Record(co Checkout, head coretree.Hash, files coretree.Tree, res *Scan) error {
	var known map[string]diskFile
	if res != nil {
		known = res.files
	}
	return writeIndex(co.Index, indexFor(head, files, known, r.now()))
}

// RemoveFiles removes the given files (slash paths) of the checkout co,
// and the directories they leave empty: untracked artifacts a caller
// decided to drop. A missing file is no error.
func (r *Repo) RemoveFiles(co Checkout, paths []string) error {
	var dirs []string
	for _, p := range paths {
		abs := filepath.Join(co.Root, filepath.FromSlash(p))
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return IOError("remove", abs, err)
		}
		dirs = append(dirs, path.Dir(p))
	}
	pruneEmptyDirs(co.Root, dirs)
	return nil
}

// recordLive records that the live checkout holds commit h (whose files
// were just committed from it): the index, built from the stat facts the
// save gathered.
func (r *Repo) recordLive(h coretree.Hash, res *Scan) error {
	files, err := r.objects.files(h)
	if err != nil {
		return err
	}
	return r.Record(r.LiveCheckout(), h, files, res)
}

// restore undoes the changes of a scan: files the commit lacks are
// removed, then emptied directories pruned, then the commit's version of
// every other changed path written. It returns the stat facts of the
// files it wrote.
func (r *Repo) restore(root string, res *Scan) (map[string]diskFile, error) {
	var dirs []string
	for _, c := range res.changes {
		if _, inCommit := res.Base[c.Path]; inCommit {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(c.Path))
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, IOError("remove", abs, err)
		}
		dirs = append(dirs, path.Dir(c.Path))
	}
	pruneEmptyDirs(root, dirs)
	written := map[string]diskFile{}
	n := 0
	for _, c := range res.changes {
		e, inCommit := res.Base[c.Path]
		if !inCommit {
			continue
		}
		data, err := r.objects.blob(e.Hash)
		if err != nil {
			return nil, err
		}
		abs := filepath.Join(root, filepath.FromSlash(c.Path))
		f, err := writeCheckoutFile(abs, data, e)
		if err != nil {
			return nil, err
		}
		written[c.Path] = f
		if n++; n == 1 {
			r.crashPoint("checkout-first-file")
		}
	}
	return written, nil
}

// writeCheckoutFile puts one committed file at abs through a temporary
// file and a rename, so a reader sees the old or the new file. Whatever
// is in the way (a link, a directory) is removed first.
func writeCheckoutFile(abs string, data []byte, e coretree.Entry) (diskFile, error) {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// A file or link where a directory must be: remove it and retry.
		if fixErr := clearNonDirs(dir); fixErr != nil {
			return diskFile{}, IOError("create directory", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return diskFile{}, IOError("create directory", dir, err)
		}
	}
	if info, err := os.Lstat(abs); err == nil && info.IsDir() {
		if err := os.RemoveAll(abs); err != nil {
			return diskFile{}, IOError("remove", abs, err)
		}
	}
	if e.Mode == coretree.Symlink {
		_ = os.Remove(abs)
		if err := os.Symlink(string(data), abs); err != nil {
			return diskFile{}, IOError("create link", abs, err)
		}
	} else {
		perm := os.FileMode(0o600)
		if e.Mode == coretree.Executable {
			perm = 0o700
		}
		tmp, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".tmp*")
		if err != nil {
			return diskFile{}, IOError("create temporary file in", dir, err)
		}
		_, werr := tmp.Write(data)
		cerr := tmp.Chmod(perm)
		if err := errors.Join(werr, cerr, tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return diskFile{}, IOError("write", abs, err)
		}
		if err := os.Rename(tmp.Name(), abs); err != nil {
			os.Remove(tmp.Name())
			return diskFile{}, IOError("rename", abs, err)
		}
	}
	info, err := os.Lstat(abs)
	if err != nil {
		return diskFile{}, IOError("stat", abs, err)
	}
	ctime, ino := statExtra(info)
	st := stat{Hash: e.Hash, Mode: e.Mode, Size: info.Size(), MTime: info.ModTime().UnixNano(), CTime: ctime, Ino: ino}
	return diskFile{Kind: kindRegular, Stat: st}, nil
}

// clearNonDirs removes the first non-directory on the way to dir.
func clearNonDirs(dir string) error {
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		info, err := os.Lstat(chain[i])
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !info.IsDir() {
			return os.Remove(chain[i])
		}
	}
	return nil
}

// pruneEmptyDirs removes the given directories (slash paths under root)
// and their parents while they are empty; root itself stays.
func pruneEmptyDirs(root string, dirs []string) {
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	seen := map[string]bool{}
	for _, d := range dirs {
		for d != "." && d != "" && d != "/" && !seen[d] {
			seen[d] = true
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(d))); err != nil {
				break // not empty, or gone
			}
			d = path.Dir(d)
		}
	}
}
