package corerepo

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// MaxFileBytes is the largest file a core may hold. Cores are prompts,
// YAML and small modules; anything bigger is refused by the path_safety
// gate instead of being copied into the repository.
const MaxFileBytes = 8 << 20

// Change kinds.
const (
	ChangeAdded    = "added"
	ChangeModified = "modified"
	ChangeDeleted  = "deleted"
)

// fileKind classifies what a scan found at a path.
type fileKind uint8

const (
	kindRegular fileKind = iota
	kindSymlink
	kindSpecial // fifo, socket, device: never committed
	kindTooLarge
)

// diskFile is one file a scan found.
type diskFile struct {
	Kind    fileKind
	Stat    stat   // Hash is set for regular files and symlinks
	Content []byte // set for changed regular files and symlinks (the link target)
}

// change is one difference between a checkout and its commit.
type change struct {
	Path string
	Kind string   // ChangeAdded, ChangeModified or ChangeDeleted
	Old  entry    // zero for added
	New  diskFile // zero for deleted
}

// scanResult is the state of one checkout against its commit.
type scanResult struct {
	head    plumbing.Hash
	base    flatTree // the commit's files
	files   map[string]diskFile
	changes []change // sorted by path
	refresh bool     // the index is missing, stale or has newly trustworthy entries
}

// scan compares the directory root with commit head, using (and, when
// worthwhile, refreshing) the stat index at idxPath. It reads only the
// files whose stat facts are not trusted.
func (r *Repo) scan(root string, head plumbing.Hash, idxPath string) (*scanResult, error) {
	// The index's stat facts vouch for file contents whatever commit it
	// was written for; its file list is the base only when it is head's.
	ix := readIndex(idxPath)
	res := &scanResult{head: head, files: map[string]diskFile{}}
	switch {
	case ix != nil && ix.Commit == head:
		res.base = ix.tree()
	case head.IsZero():
		res.base = flatTree{}
		res.refresh = true
	default:
		base, _, err := r.store.flatOf(head)
		if err != nil {
			return nil, err
		}
		res.base = base
		res.refresh = true
	}
	if ix == nil {
		ix = &statIndex{Files: map[string]stat{}}
	}
	now := time.Now().UnixNano()
	// A checkout root that is itself a link is followed (a home may keep
	// its agents elsewhere); links inside it are files like any other.
	if info, err := os.Lstat(root); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, demiurge.WrapError(demiurge.ECONFLICT, err, "core repository: checkout missing: %s", root)
		}
		root = resolved
	}
	err := filepath.WalkDir(root, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if abs == root {
			if !d.IsDir() {
				return demiurge.Errorf(demiurge.ECONFLICT, "core repository: %s is not a directory", root)
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return err
		}
		p := filepath.ToSlash(rel)
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while we walked: it is simply not there
		}
		if err != nil {
			return err
		}
		f, err := readDiskFile(abs, p, info, res.base[p], ix)
		if err != nil {
			return err
		}
		res.files[p] = f
		old, tracked := res.base[p]
		switch {
		case f.Kind == kindSpecial || f.Kind == kindTooLarge:
			res.changes = append(res.changes, change{Path: p, Kind: addedOr(tracked), Old: old, New: f})
		case !tracked:
			res.changes = append(res.changes, change{Path: p, Kind: ChangeAdded, New: f})
		case old.Hash != f.Stat.Hash || old.Mode != f.Stat.Mode:
			res.changes = append(res.changes, change{Path: p, Kind: ChangeModified, Old: old, New: f})
		default:
			f.Content = nil
			res.files[p] = f
			if prev, ok := ix.Files[p]; !ok || !prev.same(f.Stat) || !ix.trusted(prev) {
				// Hashed and unchanged: worth recording once its times
				// are old enough to be trusted.
				if f.Stat.newest() < now-racySlack(f.Stat.MTime) {
					res.refresh = true
				}
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, demiurge.WrapError(demiurge.ECONFLICT, err, "core repository: checkout missing: %s", root)
		}
		var de *demiurge.Error
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, ioError("scan", root, err)
	}
	for p, e := range res.base {
		if _, ok := res.files[p]; !ok {
			res.changes = append(res.changes, change{Path: p, Kind: ChangeDeleted, Old: e})
		}
	}
	sort.Slice(res.changes, func(i, j int) bool { return res.changes[i].Path < res.changes[j].Path })
	return res, nil
}

func addedOr(tracked bool) string {
	if tracked {
		return ChangeModified
	}
	return ChangeAdded
}

// indexFor builds the stat index of a checkout that holds exactly commit
// head's files: the unchanged files of res plus the given overrides.
func indexFor(head plumbing.Hash, files flatTree, known map[string]diskFile, now time.Time) *statIndex {
	ix := &statIndex{Commit: head, Written: now.UnixNano(), Files: make(map[string]stat, len(files))}
	for p, e := range files {
		s := stat{Hash: e.Hash, Mode: e.Mode}
		if f, ok := known[p]; ok && f.Stat.Hash == e.Hash && f.Stat.Mode == e.Mode {
			s = f.Stat
		}
		ix.Files[p] = s
	}
	return ix
}

// readDiskFile classifies and, unless the index vouches for it, hashes one
// file. p is its slash path in the checkout, base the committed entry at
// that path (zero when untracked).
func readDiskFile(abs, p string, info fs.FileInfo, base entry, ix *statIndex) (diskFile, error) {
	ctime, ino := statExtra(info)
	st := stat{Size: info.Size(), MTime: info.ModTime().UnixNano(), CTime: ctime, Ino: ino}
	switch mode := info.Mode(); {
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			return diskFile{}, err
		}
		st.Mode = filemode.Symlink
		st.Hash = plumbing.ComputeHash(plumbing.BlobObject, []byte(filepath.ToSlash(target)))
		return diskFile{Kind: kindSymlink, Stat: st, Content: []byte(target)}, nil
	case !mode.IsRegular():
		return diskFile{Kind: kindSpecial, Stat: st}, nil
	default:
		st.Mode = fileMode(mode, base)
	}
	if st.Size > MaxFileBytes {
		return diskFile{Kind: kindTooLarge, Stat: st}, nil
	}
	if prev, ok := ix.Files[p]; ok && prev.same(st) && ix.trusted(prev) {
		st.Hash = prev.Hash
		return diskFile{Kind: kindRegular, Stat: st}, nil
	}
	data, err := readRegular(abs, info)
	if err != nil {
		return diskFile{}, err
	}
	st.Hash = plumbing.ComputeHash(plumbing.BlobObject, data)
	return diskFile{Kind: kindRegular, Stat: st, Content: data}, nil
}

// fileMode is the git mode of a regular file: executable when any x bit is
// set. Where the file system has no x bits, the committed mode is kept.
func fileMode(mode fs.FileMode, base entry) filemode.FileMode {
	if !execBitsMatter {
		if base.Mode == filemode.Executable {
			return filemode.Executable
		}
		return filemode.Regular
	}
	if mode&0o111 != 0 {
		return filemode.Executable
	}
	return filemode.Regular
}

// readRegular reads a regular file at abs, refusing it if it is no longer
// the regular file the scan saw (replaced by a link or another file).
func readRegular(abs string, want fs.FileInfo) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !got.Mode().IsRegular() || (want != nil && !os.SameFile(got, want)) {
		return nil, demiurge.Errorf(demiurge.ECONFLICT, "core repository: %s changed while it was read", abs)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, demiurge.Errorf(demiurge.ECONFLICT, "core repository: %s grew while it was read", abs)
	}
	return data, nil
}
