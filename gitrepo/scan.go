package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
)

// MaxFileBytes is the largest file a checkout may commit. Cores are
// prompts, YAML and small modules: a scan does not read a bigger file and
// lists it among the problems of the proposed tree instead.
const MaxFileBytes = 8 << 20

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
	Kind coretree.ChangeKind
	Old  coretree.Entry // zero for added
	New  diskFile       // zero for deleted
}

// Checkout is a directory holding the files of one commit, with the stat
// index that lets a scan of it trust unchanged files without reading
// them. The live checkout is Repo.LiveCheckout; an evolve run has its own.
type Checkout struct {
	Root  string // the directory
	Index string // its stat index file
}

// Scan is the state of a checkout against a commit.
type Scan struct {
	Head    coretree.Hash     // the commit scanned against
	Base    coretree.Tree     // the commit's files
	Changes []coretree.Change // what the checkout changes, sorted by path

	root    string
	changes []change // Changes with what the scan found
	files   map[string]diskFile
	refresh bool // the index is missing, stale or has newly trustworthy entries
}

// Clean reports whether the checkout holds exactly the commit's files.
func (s *Scan) Clean() bool { return len(s.changes) == 0 }

// Scan compares the checkout co with commit head, using (and, when
// worthwhile, refreshing) its stat index. It reads only the files whose
// stat facts are not trusted. ECONFLICT when the checkout is missing or
// not a directory.
func (r *Repo) Scan(co Checkout, head coretree.Hash) (*Scan, error) {
	// The index's stat facts vouch for file contents whatever commit it
	// was written for; its file list is the base only when it is head's.
	ix := readIndex(co.Index)
	res := &Scan{Head: head, root: co.Root, files: map[string]diskFile{}}
	switch {
	case ix != nil && ix.Commit == head:
		res.Base = ix.tree()
	case head.IsZero():
		res.Base = coretree.Tree{}
		res.refresh = true
	default:
		base, err := r.objects.files(head)
		if err != nil {
			return nil, err
		}
		res.Base = base
		res.refresh = true
	}
	if ix == nil {
		ix = &statIndex{Files: map[string]stat{}}
	}
	now := time.Now().UnixNano()
	root := co.Root
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
		f, err := readDiskFile(abs, p, info, res.Base[p], ix)
		if err != nil {
			return err
		}
		res.files[p] = f
		old, tracked := res.Base[p]
		switch {
		case f.Kind == kindSpecial || f.Kind == kindTooLarge:
			res.changes = append(res.changes, change{Path: p, Kind: addedOr(tracked), Old: old, New: f})
		case !tracked:
			res.changes = append(res.changes, change{Path: p, Kind: coretree.Added, New: f})
		case old.Hash != f.Stat.Hash || old.Mode != f.Stat.Mode:
			res.changes = append(res.changes, change{Path: p, Kind: coretree.Modified, Old: old, New: f})
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
		return nil, IOError("scan", root, err)
	}
	for p, e := range res.Base {
		if _, ok := res.files[p]; !ok {
			res.changes = append(res.changes, change{Path: p, Kind: coretree.Deleted, Old: e})
		}
	}
	slices.SortFunc(res.changes, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	res.Changes = make([]coretree.Change, len(res.changes))
	for i, c := range res.changes {
		res.Changes[i] = coretree.Change{Path: c.Path, Kind: c.Kind}
	}
	return res, nil
}

func addedOr(tracked bool) coretree.ChangeKind {
	if tracked {
		return coretree.Modified
	}
	return coretree.Added
}

// ScanLive scans the live checkout against the live revision, refreshing
// its index when it is stale and the checkout is recorded at live.
func (r *Repo) ScanLive() (coretree.Hash, *Scan, error) {
	live, err := r.Live()
	if err != nil {
		return live, nil, err
	}
	co := r.LiveCheckout()
	res, err := r.Scan(co, live)
	if err != nil {
		return live, nil, err
	}
	if res.refresh {
		if head, ok, _ := r.CheckoutHead(); ok && head == live {
			_ = writeIndex(co.Index, indexFor(live, res.Base, res.files, r.now()))
		}
	}
	return live, res, nil
}

// Proposed applies the scan's changes to its base: the tree a commit of
// the checkout would have, the files that cannot be committed at all
// (special files, oversized files: left out of the tree) with why, and
// the contents of the changed files.
func (s *Scan) Proposed() (tree coretree.Tree, problems map[string]string, content map[string][]byte) {
	tree = maps.Clone(s.Base)
	if tree == nil {
		tree = coretree.Tree{}
	}
	problems, content = map[string]string{}, map[string][]byte{}
	for _, c := range s.changes {
		switch {
		case c.Kind == coretree.Deleted:
			delete(tree, c.Path)
		case c.New.Kind == kindSpecial:
			delete(tree, c.Path)
			problems[c.Path] = "not a regular file (device, pipe or socket)"
		case c.New.Kind == kindTooLarge:
			delete(tree, c.Path)
			problems[c.Path] = fmt.Sprintf("file larger than %d MiB", MaxFileBytes>>20)
		default:
			tree[c.Path] = coretree.Entry{Hash: c.New.Stat.Hash, Mode: c.New.Stat.Mode}
			content[c.Path] = c.New.Content
		}
	}
	return tree, problems, content
}

// Unchanged refuses (ECONFLICT "agents tree changed during save (<path>);
// retry") when a changed file was modified after the scan read it: what
// was judged of the scan is what would be committed.
func (s *Scan) Unchanged() error {
	for _, c := range s.changes {
		if c.Kind == coretree.Deleted {
			continue
		}
		info, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(c.Path)))
		if err != nil {
			return demiurge.WrapError(demiurge.ECONFLICT, err, "agents tree changed during save (%s); retry", c.Path)
		}
		ctime, ino := statExtra(info)
		if info.Size() != c.New.Stat.Size || info.ModTime().UnixNano() != c.New.Stat.MTime || ctime != c.New.Stat.CTime || ino != c.New.Stat.Ino {
			return demiurge.Errorf(demiurge.ECONFLICT, "agents tree changed during save (%s); retry", c.Path)
		}
	}
	return nil
}

// indexFor builds the stat index of a checkout that holds exactly commit
// head's files: their stat facts where known matches them.
func indexFor(head coretree.Hash, files coretree.Tree, known map[string]diskFile, now time.Time) *statIndex {
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
func readDiskFile(abs, p string, info fs.FileInfo, base coretree.Entry, ix *statIndex) (diskFile, error) {
	ctime, ino := statExtra(info)
	st := stat{Size: info.Size(), MTime: info.ModTime().UnixNano(), CTime: ctime, Ino: ino}
	switch mode := info.Mode(); {
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			return diskFile{}, err
		}
		st.Mode = coretree.Symlink
		st.Hash = BlobHash([]byte(filepath.ToSlash(target)))
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
	st.Hash = BlobHash(data)
	return diskFile{Kind: kindRegular, Stat: st, Content: data}, nil
}

// fileMode is the git mode of a regular file: executable when any x bit is
// set. Where the file system has no x bits, the committed mode is kept.
func fileMode(mode fs.FileMode, base coretree.Entry) coretree.Mode {
	if !execBitsMatter {
		if base.Mode == coretree.Executable {
			return coretree.Executable
		}
		return coretree.Regular
	}
	if mode&0o111 != 0 {
		return coretree.Executable
	}
	return coretree.Regular
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
