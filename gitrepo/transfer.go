package gitrepo

import (
	"bytes"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
)

// Revisions travel between repositories (the core repositories of several
// Hosts, through their shared ledger) as git packs: Pack writes one for a
// commit, ImportPack stores one. A pack holds a commit and the objects of
// its tree that a base commit's tree lacks, so a repository that holds the
// base (its parent) needs nothing else to read the commit's files.

// HasCommit reports whether the store holds commit h.
func (r *Repo) HasCommit(h coretree.Hash) bool {
	if !r.objects.has(h) {
		return false
	}
	_, err := r.objects.commit(h)
	return err == nil
}

// Pack returns an undeltified git pack of commit c and of every tree and
// blob of c's tree that base's tree lacks (base zero: all of them), with
// the number of objects in it. base must be stored when it is not zero.
func (r *Repo) Pack(c, base coretree.Hash) ([]byte, int, error) {
	return r.objects.pack(plumbing.Hash(c), plumbing.Hash(base))
}

func (s *objects) pack(c, base plumbing.Hash) ([]byte, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	have := map[plumbing.Hash]bool{}
	if !base.IsZero() {
		bc, err := object.GetCommit(s.s, base)
		if err != nil {
			return nil, 0, objectError("read commit", base, err)
		}
		if err := s.reachLocked(bc.TreeHash, have, nil); err != nil {
			return nil, 0, err
		}
	}
	cc, err := object.GetCommit(s.s, c)
	if err != nil {
		return nil, 0, objectError("read commit", c, err)
	}
	order := []plumbing.Hash{c}
	if err := s.reachLocked(cc.TreeHash, have, &order); err != nil {
		return nil, 0, err
	}
	var buf bytes.Buffer
	if _, err := packfile.NewEncoder(&buf, s.s, false).Encode(order, 0); err != nil {
		return nil, 0, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: pack %s", c)
	}
	return buf.Bytes(), len(order), nil
}

// reachLocked walks the tree h and every object under it that have does
// not hold yet, marking each in have and, when out is set, appending it.
// A subtree already in have is skipped whole: its objects are there too.
func (s *objects) reachLocked(h plumbing.Hash, have map[plumbing.Hash]bool, out *[]plumbing.Hash) error {
	if have[h] {
		return nil
	}
	have[h] = true
	if out != nil {
		*out = append(*out, h)
	}
	t, err := object.GetTree(s.s, h)
	if err != nil {
		return objectError("read tree", h, err)
	}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			if err := s.reachLocked(e.Hash, have, out); err != nil {
				return err
			}
			continue
		}
		if e.Mode == filemode.Submodule || have[e.Hash] {
			continue
		}
		have[e.Hash] = true
		if out != nil {
			*out = append(*out, e.Hash)
		}
	}
	return nil
}

// ImportPack stores the objects of a git pack (as Pack writes them) that
// the store lacks, as loose objects, so every process of this repository
// sees them at once. It moves no ref. A pack that does not parse is
// EINTERNAL "core repository: import pack: …".
func (r *Repo) ImportPack(data []byte) error {
	mem := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(mem, bytes.NewReader(data)); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: import pack")
	}
	iter, err := mem.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: import pack")
	}
	defer iter.Close()
	return iter.ForEach(func(o plumbing.EncodedObject) error {
		obj, err := copyObject(o)
		if err != nil {
			return err
		}
		_, err = r.objects.putObject(obj)
		return err
	})
}

// copyObject reads a stored object into a MemoryObject putObject takes.
func copyObject(o plumbing.EncodedObject) (*plumbing.MemoryObject, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, objectError("read imported object", o.Hash(), err)
	}
	defer rd.Close()
	obj := &plumbing.MemoryObject{}
	obj.SetType(o.Type())
	if _, err := io.Copy(obj, rd); err != nil {
		return nil, objectError("read imported object", o.Hash(), err)
	}
	if obj.Hash() != o.Hash() {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "core repository: imported object %s hashes to %s", o.Hash(), obj.Hash())
	}
	return obj, nil
}
