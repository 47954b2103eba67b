package gitrepo

import (
	"errors"
	"io"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Git identity of every commit the Host makes.
const (
	gitName  = "Demiurge Host"
	gitEmail = "demiurge@localhost"
)

// BlobHash is the git id of a blob holding data.
func BlobHash(data []byte) coretree.Hash {
	return coretree.Hash(plumbing.ComputeHash(plumbing.BlobObject, data))
}

// objects is the object database of the bare repository, through go-git's
// filesystem storage. go-git writes loose objects through a temporary file
// and a rename, runs no hooks, filters or configured commands, and never
// reads the repository's config for behaviour.
type objects struct {
	mu    sync.Mutex // guards s, flats and known: go-git storage is not documented as safe for concurrent use
	s     *filesystem.Storage
	flats map[plumbing.Hash]coretree.Tree // by tree hash; small, cleared when full
	known map[plumbing.Hash]bool          // objects known to be stored (objects are never deleted)

	pending *batch // objects collected until flush (pack.go); nil outside a batch
	packDir string // objects/pack, where flush writes packs
}

const maxCachedFlats = 8

func newObjects(gitDir string) *objects {
	return &objects{
		packDir: filepath.Join(gitDir, "objects", "pack"),
		s:       filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault()),
		flats:   map[plumbing.Hash]coretree.Tree{},
		known:   map[plumbing.Hash]bool{},
	}
}

// initBare creates the bare repository at gitDir: the object and ref
// directories, a config that says bare, and HEAD naming the default
// branch; no hooks directory. A repository that has a HEAD already is left
// as it is. It goes through the filesystem storage, not go-git's
// repository package, which would link every transport (SSH, HTTP, the
// git protocol) into the binary and run their package initialisation in
// every process for a repository that is never fetched from or pushed to.
func initBare(gitDir string) error {
	s := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	if _, err := s.Reference(plumbing.HEAD); err == nil {
		return nil
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return IOError("initialise repository", gitDir, err)
	}
	if err := s.Init(); err != nil {
		return IOError("initialise repository", gitDir, err)
	}
	cfg := config.NewConfig()
	cfg.Core.IsBare = true
	if err := s.SetConfig(cfg); err != nil {
		return IOError("initialise repository", gitDir, err)
	}
	if err := s.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.Master)); err != nil {
		return IOError("initialise repository", gitDir, err)
	}
	return nil
}

func objectError(op string, h plumbing.Hash, err error) error {
	return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: %s %s", op, h)
}

func (s *objects) has(h coretree.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil && s.pending.objs[plumbing.Hash(h)] != nil {
		return true
	}
	return s.s.HasEncodedObject(plumbing.Hash(h)) == nil
}

func (s *objects) putObject(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	h := obj.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil && s.pending.objs[h] != nil {
		return h, nil
	}
	if s.known[h] || s.s.HasEncodedObject(h) == nil {
		s.rememberLocked(h)
		return h, nil
	}
	if s.pending != nil {
		s.pending.objs[h] = obj
		s.pending.order = append(s.pending.order, h)
		return h, nil
	}
	if _, err := s.s.SetEncodedObject(obj); err != nil {
		return plumbing.ZeroHash, objectError("write object", h, err)
	}
	s.rememberLocked(h)
	return h, nil
}

// rememberLocked records a stored object; the set is bounded (cleared
// when large) because it is only a shortcut around a stat.
func (s *objects) rememberLocked(h plumbing.Hash) {
	if len(s.known) >= 1<<16 {
		clear(s.known)
	}
	s.known[h] = true
}

func (s *objects) writeBlob(data []byte) (coretree.Hash, error) {
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.BlobObject)
	if _, err := obj.Write(data); err != nil {
		return coretree.Hash{}, err
	}
	h, err := s.putObject(obj)
	return coretree.Hash(h), err
}

func (s *objects) blob(ch coretree.Hash) ([]byte, error) {
	h := plumbing.Hash(ch)
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, objectError("read blob", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, objectError("read blob", h, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, objectError("read blob", h, err)
	}
	return data, nil
}

// Commit is what the repository records of a commit.
type Commit struct {
	Hash    coretree.Hash
	Tree    coretree.Hash
	Parents []coretree.Hash
	Message string
	When    time.Time
}

func (s *objects) commit(h coretree.Hash) (Commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := object.GetCommit(s.s, plumbing.Hash(h))
	if err != nil {
		return Commit{}, objectError("read commit", plumbing.Hash(h), err)
	}
	parents := make([]coretree.Hash, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = coretree.Hash(p)
	}
	return Commit{Hash: coretree.Hash(c.Hash), Tree: coretree.Hash(c.TreeHash), Parents: parents, Message: c.Message, When: c.Committer.When}, nil
}

func (s *objects) writeCommit(tree coretree.Hash, parents []coretree.Hash, message string, when time.Time) (coretree.Hash, error) {
	sig := object.Signature{Name: gitName, Email: gitEmail, When: when}
	ps := make([]plumbing.Hash, len(parents))
	for i, p := range parents {
		ps[i] = plumbing.Hash(p)
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: plumbing.Hash(tree), ParentHashes: ps}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return coretree.Hash{}, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: encode commit")
	}
	h, err := s.putObject(obj)
	return coretree.Hash(h), err
}

// files returns the files of commit h's tree.
func (s *objects) files(h coretree.Hash) (coretree.Tree, error) {
	c, err := s.commit(h)
	if err != nil {
		return nil, err
	}
	return s.treeFiles(plumbing.Hash(c.Tree))
}

func (s *objects) treeFiles(tree plumbing.Hash) (coretree.Tree, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.flats[tree]; ok {
		return f, nil
	}
	f := coretree.Tree{}
	if err := s.walkTreeLocked(tree, "", f); err != nil {
		return nil, err
	}
	if len(s.flats) >= maxCachedFlats {
		clear(s.flats)
	}
	s.flats[tree] = f
	return f, nil
}

func (s *objects) walkTreeLocked(h plumbing.Hash, prefix string, out coretree.Tree) error {
	t, err := object.GetTree(s.s, h)
	if err != nil {
		return objectError("read tree", h, err)
	}
	for _, e := range t.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if e.Mode == filemode.Dir {
			if err := s.walkTreeLocked(e.Hash, p, out); err != nil {
				return err
			}
			continue
		}
		out[p] = coretree.Entry{Hash: coretree.Hash(e.Hash), Mode: coretree.Mode(e.Mode)}
	}
	return nil
}

// dirNode is one directory while a tree object is built from a Tree.
type dirNode struct {
	files map[string]coretree.Entry
	dirs  map[string]*dirNode
}

func newDirNode() *dirNode {
	return &dirNode{files: map[string]coretree.Entry{}, dirs: map[string]*dirNode{}}
}

// writeTree stores the tree of files (every subtree object it needs that
// is not stored yet) and returns the root tree hash. Blobs must be stored
// already.
func (s *objects) writeTree(files coretree.Tree) (plumbing.Hash, error) {
	h, err := s.writeTreeNodes(files)
	if err == nil {
		// The tree just written is the one a checkout or a load reads
		// next: known by its id, it need not be read back.
		s.mu.Lock()
		if len(s.flats) >= maxCachedFlats {
			clear(s.flats)
		}
		s.flats[h] = maps.Clone(files)
		s.mu.Unlock()
	}
	return h, err
}

func (s *objects) writeTreeNodes(files coretree.Tree) (plumbing.Hash, error) {
	root := newDirNode()
	for p, e := range files {
		n := root
		parts := strings.Split(p, "/")
		for _, d := range parts[:len(parts)-1] {
			child := n.dirs[d]
			if child == nil {
				child = newDirNode()
				n.dirs[d] = child
			}
			n = child
		}
		n.files[parts[len(parts)-1]] = e
	}
	return s.writeDir(root)
}

func (s *objects) writeDir(n *dirNode) (plumbing.Hash, error) {
	entries := make([]object.TreeEntry, 0, len(n.files)+len(n.dirs))
	for name, e := range n.files {
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.FileMode(e.Mode), Hash: plumbing.Hash(e.Hash)})
	}
	for name, d := range n.dirs {
		h, err := s.writeDir(d)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(entries))
	t := &object.Tree{Entries: entries}
	obj := &plumbing.MemoryObject{}
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: encode tree")
	}
	return s.putObject(obj)
}
