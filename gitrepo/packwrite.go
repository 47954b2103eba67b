package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// packWriter writes a batch as one undeltified pack (format version 2)
// and its version-2 index in a single pass: each object is compressed
// once, and its offset and CRC-32 are known as it is written. go-git's own
// pack writer reads the pack back to index it, inflating and hashing
// every object a second time, which made the first revision of a runtime
// home the most costly step of its first run.
//
// The pack and the index are written under temporary names in
// objects/pack and renamed into place, the pack first: git and go-git
// look a pack up through its index, so a pack is never seen before it is
// whole.
type packWriter struct {
	dir string // objects/pack

	zw   *zlib.Writer
	body bytes.Buffer // one object's compressed bytes
}

// packedObject is what the index records of one object.
type packedObject struct {
	hash   plumbing.Hash
	crc    uint32
	offset uint64
}

// maxPackOffset is the largest offset the index's 4-byte table holds;
// a batch whose pack would be larger is left to go-git's writer.
const maxPackOffset = 1<<31 - 1

// errPackTooLarge is write's answer for such a batch.
var errPackTooLarge = errors.New("pack too large for a 4-byte offset table")

// write stores objs, in order, and returns the pack's checksum.
func (w *packWriter) write(objs []plumbing.EncodedObject) (plumbing.Hash, error) {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
	tmp, err := os.CreateTemp(w.dir, "tmp_pack_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer os.Remove(tmp.Name())
	packed, sum, err := w.writePack(tmp, objs)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	idx, err := os.CreateTemp(w.dir, "tmp_idx_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer os.Remove(idx.Name())
	err = writePackIndex(idx, packed, sum)
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	base := filepath.Join(w.dir, "pack-"+sum.String())
	for _, f := range []struct{ from, to string }{{tmp.Name(), base + ".pack"}, {idx.Name(), base + ".idx"}} {
		// Packs are named by their content: one already there holds the
		// same objects (and a read-only file cannot be replaced everywhere).
		if _, err := os.Stat(f.to); err == nil {
			continue
		}
		if err := os.Chmod(f.from, 0o444); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := os.Rename(f.from, f.to); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return sum, nil
}

// writePack writes the pack of objs to f and returns what the index needs.
func (w *packWriter) writePack(f io.Writer, objs []plumbing.EncodedObject) ([]packedObject, plumbing.Hash, error) {
	sum := sha1.New()
	out := bufio.NewWriterSize(io.MultiWriter(f, sum), 64<<10)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(objs)))
	if _, err := out.Write(head[:]); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	offset := uint64(len(head))
	packed := make([]packedObject, 0, len(objs))
	crc := crc32.NewIEEE()
	for _, o := range objs {
		if offset > maxPackOffset {
			return nil, plumbing.ZeroHash, errPackTooLarge
		}
		hdr := objectHeader(o.Type(), o.Size())
		if err := w.compress(o); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		crc.Reset()
		crc.Write(hdr)
		crc.Write(w.body.Bytes())
		if _, err := out.Write(hdr); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		if _, err := out.Write(w.body.Bytes()); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		packed = append(packed, packedObject{hash: o.Hash(), crc: crc.Sum32(), offset: offset})
		offset += uint64(len(hdr) + w.body.Len())
	}
	if err := out.Flush(); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	var h plumbing.Hash
	copy(h[:], sum.Sum(nil))
	if _, err := f.Write(h[:]); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return packed, h, nil
}

// compress leaves o's content, zlib-compressed, in w.body. One compressor
// serves every object: a new one costs more than the small objects of a
// core take to compress.
func (w *packWriter) compress(o plumbing.EncodedObject) error {
	w.body.Reset()
	if w.zw == nil {
		// The fastest level: its state is a quarter of the default's, and
		// a core's files are small text that any level packs well.
		zw, err := zlib.NewWriterLevel(&w.body, zlib.BestSpeed)
		if err != nil {
			return err
		}
		w.zw = zw
	} else {
		w.zw.Reset(&w.body)
	}
	r, err := o.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := io.Copy(w.zw, r); err != nil {
		return err
	}
	return w.zw.Close()
}

// objectHeader is a pack entry's header: the type and the inflated size,
// four bits of the size in the first byte and seven in each next one.
func objectHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// writePackIndex writes the version-2 index of a pack: fan-out table, sorted
// ids, CRC-32s and 4-byte offsets in id order, the pack's checksum and the
// index's own.
func writePackIndex(f io.Writer, packed []packedObject, packSum plumbing.Hash) error {
	objs := slices.Clone(packed)
	slices.SortFunc(objs, func(a, b packedObject) int { return bytes.Compare(a.hash[:], b.hash[:]) })
	sum := sha1.New()
	out := bufio.NewWriter(io.MultiWriter(f, sum))
	put := func(v uint32) {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		out.Write(b[:])
	}
	out.Write([]byte{0xff, 't', 'O', 'c'})
	put(2)
	var fanout [256]uint32
	for _, o := range objs {
		fanout[o.hash[0]]++
	}
	var total uint32
	for i := range fanout {
		total += fanout[i]
		put(total)
	}
	for _, o := range objs {
		out.Write(o.hash[:])
	}
	for _, o := range objs {
		put(o.crc)
	}
	for _, o := range objs {
		put(uint32(o.offset))
	}
	out.Write(packSum[:])
	if err := out.Flush(); err != nil {
		return err
	}
	_, err := f.Write(sum.Sum(nil))
	return err
}
