package corerepo

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// syncCheckout makes the directory root hold exactly the files of commit
// target (files not in it are removed, differing ones rewritten) and
// records the index at idxPath. It is idempotent: recovery reruns it.
func (r *Repo) syncCheckout(root string, target plumbing.Hash, idxPath string) error {
	res, err := r.scan(root, target, idxPath)
	if err != nil {
		return err
	}
	return r.restoreAndIndex(root, res, idxPath)
}

// restoreAndIndex undoes the changes of a scan of root (restore) and
// records the index at idxPath: root then holds exactly res.head's files.
func (r *Repo) restoreAndIndex(root string, res *scanResult, idxPath string) error {
	written, err := r.restore(root, res)
	if err != nil {
		return err
	}
	known := make(map[string]diskFile, len(res.files)+len(written))
	maps.Copy(known, res.files)
	maps.Copy(known, written)
	return writeIndex(idxPath, indexFor(res.head, res.base, known, r.now()))
}

// recordCheckout records that the live checkout holds commit h (whose
// files were just committed from it): the index, built from the stat
// facts the save gathered.
func (r *Repo) recordCheckout(h plumbing.Hash, known map[string]diskFile) error {
	files, _, err := r.store.flatOf(h)
	if err != nil {
		return err
	}
	return writeIndex(r.paths.liveIndex(), indexFor(h, files, known, r.now()))
}

// restore undoes the changes of a scan: files the commit lacks are
// removed, then emptied directories pruned, then the commit's version of
// every other changed path written. It returns the stat facts of the
// files it wrote.
func (r *Repo) restore(root string, res *scanResult) (map[string]diskFile, error) {
	var dirs []string
	for _, c := range res.changes {
		if _, inCommit := res.base[c.Path]; inCommit {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(c.Path))
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, ioError("remove", abs, err)
		}
		dirs = append(dirs, path.Dir(c.Path))
	}
	pruneEmptyDirs(root, dirs)
	written := map[string]diskFile{}
	n := 0
	for _, c := range res.changes {
		e, inCommit := res.base[c.Path]
		if !inCommit {
			continue
		}
		data, err := r.store.blob(e.Hash)
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
			crashPoint("checkout-first-file")
		}
	}
	return written, nil
}

// writeCheckoutFile puts one committed file at abs through a temporary
// file and a rename, so a reader sees the old or the new file. Whatever
// is in the way (a link, a directory) is removed first.
func writeCheckoutFile(abs string, data []byte, e entry) (diskFile, error) {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// A file or link where a directory must be: remove it and retry.
		if fixErr := clearNonDirs(dir); fixErr != nil {
			return diskFile{}, ioError("create directory", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return diskFile{}, ioError("create directory", dir, err)
		}
	}
	if info, err := os.Lstat(abs); err == nil && info.IsDir() {
		if err := os.RemoveAll(abs); err != nil {
			return diskFile{}, ioError("remove", abs, err)
		}
	}
	if e.Mode == filemode.Symlink {
		_ = os.Remove(abs)
		if err := os.Symlink(string(data), abs); err != nil {
			return diskFile{}, ioError("create link", abs, err)
		}
	} else {
		perm := os.FileMode(0o600)
		if e.Mode == filemode.Executable {
			perm = 0o700
		}
		tmp, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".tmp*")
		if err != nil {
			return diskFile{}, ioError("create temporary file in", dir, err)
		}
		_, werr := tmp.Write(data)
		cerr := tmp.Chmod(perm)
		if err := errors.Join(werr, cerr, tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return diskFile{}, ioError("write", abs, err)
		}
		if err := os.Rename(tmp.Name(), abs); err != nil {
			os.Remove(tmp.Name())
			return diskFile{}, ioError("rename", abs, err)
		}
	}
	info, err := os.Lstat(abs)
	if err != nil {
		return diskFile{}, ioError("stat", abs, err)
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
