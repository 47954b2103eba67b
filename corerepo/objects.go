package corerepo

import (
	"errors"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Git identity of every commit the Host makes (spec host-runtime §7.3).
const (
	gitName  = "Demiurge Host"
	gitEmail = "demiurge@localhost"
)

// entry is one file of a tree.
type entry struct {
	Hash plumbing.Hash
	Mode filemode.FileMode
}

// flatTree maps slash paths relative to the agents root to their files.
// It is the working form of a tree: diffs, status and tree building all
// use it. A flatTree returned by the store is shared: never modify it.
type flatTree map[string]entry

// store is the object database of the bare repository, through go-git's
// filesystem storage. go-git writes loose objects through a temporary file
// and a rename, runs no hooks, filters or configured commands, and never
// reads the repository's config for behaviour.
type store struct {
	mu    sync.Mutex // guards s and flats: go-git storage is not documented as safe for concurrent use
	s     *filesystem.Storage
	flats map[plumbing.Hash]flatTree // by tree hash; small, cleared when full
	known map[plumbing.Hash]bool     // objects known to be stored (objects are never deleted)
}

const maxCachedFlats = 8

func newStore(gitDir string) *store {
	return &store{
		s:     filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault()),
		flats: map[plumbing.Hash]flatTree{},
		known: map[plumbing.Hash]bool{},
	}
}

// initBare creates the bare repository at gitDir (config and HEAD; no
// hooks directory). An existing repository is left as it is.
func initBare(gitDir string) error {
	_, err := git.PlainInit(gitDir, true)
	if err != nil && !errors.Is(err, git.ErrRepositoryAlreadyExists) {
		return ioError("initialise repository", gitDir, err)
	}
	return nil
}

func (s *store) has(h plumbing.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.HasEncodedObject(h) == nil
}

func (s *store) put(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	obj := &plumbing.MemoryObject{}
	obj.SetType(t)
	if _, err := obj.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.putObject(obj)
}

func (s *store) putObject(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	h := obj.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known[h] || s.s.HasEncodedObject(h) == nil {
		s.rememberLocked(h)
		return h, nil
	}
	if _, err := s.s.SetEncodedObject(obj); err != nil {
		return plumbing.ZeroHash, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: write object %s: %v", h, err)
	}
	s.rememberLocked(h)
	return h, nil
}

// rememberLocked records a stored object; the set is bounded (cleared
// when large) because it is only a shortcut around a stat.
func (s *store) rememberLocked(h plumbing.Hash) {
	if len(s.known) >= 1<<16 {
		clear(s.known)
	}
	s.known[h] = true
}

func (s *store) writeBlob(data []byte) (plumbing.Hash, error) {
	return s.put(plumbing.BlobObject, data)
}

func (s *store) blob(h plumbing.Hash) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: read blob %s: %v", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: read blob %s: %v", h, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: read blob %s: %v", h, err)
	}
	return data, nil
}

// commitInfo is what the repository needs of a commit.
type commitInfo struct {
	Hash    plumbing.Hash
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	Message string
	When    time.Time
}

func (s *store) commit(h plumbing.Hash) (commitInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := object.GetCommit(s.s, h)
	if err != nil {
		return commitInfo{}, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: read commit %s: %v", h, err)
	}
	return commitInfo{Hash: c.Hash, Tree: c.TreeHash, Parents: c.ParentHashes, Message: c.Message, When: c.Committer.When}, nil
}

func (s *store) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, message string, when time.Time) (plumbing.Hash, error) {
	sig := object.Signature{Name: gitName, Email: gitEmail, When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree, ParentHashes: parents}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: encode commit: %v", err)
	}
	return s.putObject(obj)
}

// flatOf returns the files of commit h's tree, and the tree hash.
func (s *store) flatOf(h plumbing.Hash) (flatTree, plumbing.Hash, error) {
	c, err := s.commit(h)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	f, err := s.flatTreeOf(c.Tree)
	return f, c.Tree, err
}

func (s *store) flatTreeOf(tree plumbing.Hash) (flatTree, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.flats[tree]; ok {
		return f, nil
	}
	f := flatTree{}
	if err := s.walkTreeLocked(tree, "", f); err != nil {
		return nil, err
	}
	if len(s.flats) >= maxCachedFlats {
		clear(s.flats)
	}
	s.flats[tree] = f
	return f, nil
}

func (s *store) walkTreeLocked(h plumbing.Hash, prefix string, out flatTree) error {
	t, err := object.GetTree(s.s, h)
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: read tree %s: %v", h, err)
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
		out[p] = entry{Hash: e.Hash, Mode: e.Mode}
	}
	return nil
}

// dirNode is one directory while a tree is built from a flatTree.
type dirNode struct {
	files map[string]entry
	dirs  map[string]*dirNode
}

// writeTree stores the tree of files (every subtree object it needs that is
// not stored yet) and returns the root tree hash. Blobs must be stored
// already.
func (s *store) writeTree(files flatTree) (plumbing.Hash, error) {
	root := &dirNode{files: map[string]entry{}, dirs: map[string]*dirNode{}}
	for p, e := range files {
		n := root
		parts := strings.Split(p, "/")
		for _, d := range parts[:len(parts)-1] {
			child := n.dirs[d]
			if child == nil {
				child = &dirNode{files: map[string]entry{}, dirs: map[string]*dirNode{}}
				n.dirs[d] = child
			}
			n = child
		}
		n.files[parts[len(parts)-1]] = e
	}
	return s.writeDir(root)
}

func (s *store) writeDir(n *dirNode) (plumbing.Hash, error) {
	entries := make([]object.TreeEntry, 0, len(n.files)+len(n.dirs))
	for name, e := range n.files {
		entries = append(entries, object.TreeEntry{Name: name, Mode: e.Mode, Hash: e.Hash})
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
		return plumbing.ZeroHash, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: encode tree: %v", err)
	}
	return s.putObject(obj)
}

// subtreeDigests returns, per top-level name of files, a digest of everything
// under it: what changed between two trees at the granularity of cores.
func subtreeDigests(files flatTree) map[string]string {
	byTop := map[string][]string{}
	for p, e := range files {
		top, _, _ := strings.Cut(p, "/")
		byTop[top] = append(byTop[top], p+"\x00"+e.Hash.String()+"\x00"+e.Mode.String())
	}
	out := make(map[string]string, len(byTop))
	for top, lines := range byTop {
		sort.Strings(lines)
		out[top] = strings.Join(lines, "\n")
	}
	return out
}
