package gitrepo

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/demiurge/demiurge"
)

// packThreshold is the number of new objects from which a batch is stored
// as one pack rather than as loose objects. A loose object is a file in a
// directory of its own (objects/xx/), so storing a whole core (the first
// revision of a runtime home: tens of blobs and trees) loose costs a
// directory and a file each; a pack costs two files. Small changes (a save
// of an edit) stay loose, as git's own commands leave them.
const packThreshold = 16

// batch collects the objects a StoreTree and the commit after it create, so
// that they can be stored together (flush). Objects already stored are
// never collected again.
type batch struct {
	objs  map[plumbing.Hash]plumbing.EncodedObject
	order []plumbing.Hash
}

// beginBatch makes putObject collect new objects until flush. The caller
// holds no lock; batches do not nest.
func (s *objects) beginBatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = &batch{objs: map[plumbing.Hash]plumbing.EncodedObject{}}
}

// flush stores the collected objects, as one pack from packThreshold of
// them and loose below it, and ends the batch. The objects are stored
// before flush returns, so a ref written afterwards names stored objects
// only.
func (s *objects) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.pending
	s.pending = nil
	if b == nil || len(b.order) == 0 {
		return nil
	}
	if len(b.order) < packThreshold {
		for _, h := range b.order {
			if _, err := s.s.SetEncodedObject(b.objs[h]); err != nil {
				return objectError("write object", h, err)
			}
			s.rememberLocked(h)
		}
		return nil
	}
	if err := s.writePackLocked(b); err != nil {
		return err
	}
	for _, h := range b.order {
		s.rememberLocked(h)
	}
	return nil
}

// writePackLocked writes b's objects as one undeltified pack with its
// index (packwrite.go), then has the storage read the pack indexes again.
// A pack too large for the short offset table goes through go-git's pack
// writer (a temporary file, the index built from it, then both renamed
// into objects/pack).
func (s *objects) writePackLocked(b *batch) error {
	objs := make([]plumbing.EncodedObject, len(b.order))
	for i, h := range b.order {
		objs[i] = b.objs[h]
	}
	w := packWriter{dir: s.packDir}
	_, err := w.write(objs)
	switch {
	case err == nil:
		s.s.Reindex()
		return nil
	case !errors.Is(err, errPackTooLarge):
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: write a pack")
	}
	mem := memory.NewStorage()
	for _, o := range objs {
		if _, err := mem.SetEncodedObject(o); err != nil {
			return objectError("stage object", o.Hash(), err)
		}
	}
	pw, err := s.s.PackfileWriter()
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: open a pack")
	}
	if _, err := packfile.NewEncoder(pw, mem, false).Encode(b.order, 0); err != nil {
		pw.Close()
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: write a pack")
	}
	if err := pw.Close(); err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: index a pack")
	}
	return nil
}
