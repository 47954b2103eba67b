package gitrepo

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge/coretree"
)

// The stat index of a checkout records, for the commit the checkout holds,
// every file with its blob hash and the stat facts (size, mtime, ctime,
// inode, mode) it had when last hashed. A scan trusts the recorded hash of
// a file whose stat facts are unchanged, so a status of an unchanged tree
// reads directories and stats files but hashes nothing.
//
// Racy entries: a file changed within the timestamp granularity of its
// recording can keep its mtime. Like git, an entry is trusted only when the
// file's times are older than the index write by racySlack; younger
// entries are re-hashed until a later scan rewrites the index.
//
// The index is a cache. It names its commit, and an index for any other
// commit is ignored (the tree is then read from the object store). Writes
// go through a rename, so concurrent writers can only make it stale, never
// wrong.

// Racy slack: file systems with sub-second timestamps (ext4, xfs, btrfs,
// tmpfs, APFS, NTFS) stamp files from a clock that may lag by a scheduler
// tick, so 50 ms is ample; a whole-second mtime suggests a coarse file
// system (FAT: 2 s, HFS+: 1 s) and gets 2 s.
const (
	racySlackFine   = 50 * time.Millisecond
	racySlackCoarse = 2 * time.Second
)

// racySlack is the slack for a file stamped mtime (unix ns).
func racySlack(mtime int64) int64 {
	if mtime%int64(time.Second) == 0 {
		return int64(racySlackCoarse)
	}
	return int64(racySlackFine)
}

const indexMagic = "demiurge-index 1"

// stat is what the index records of one file.
type stat struct {
	Hash  coretree.Hash
	Mode  coretree.Mode
	Size  int64
	MTime int64 // unix ns; 0 when unknown
	CTime int64 // unix ns; 0 when unknown or unsupported
	Ino   uint64
}

func (s stat) same(o stat) bool {
	return s.Mode == o.Mode && s.Size == o.Size && s.MTime == o.MTime && s.CTime == o.CTime && s.Ino == o.Ino
}

// newest is the later of the file's times.
func (s stat) newest() int64 { return max(s.MTime, s.CTime) }

// statIndex is a decoded index.
type statIndex struct {
	Commit  coretree.Hash
	Written int64 // unix ns
	Files   map[string]stat
}

// trusted reports whether s may stand for the file's content without
// hashing it.
func (ix *statIndex) trusted(s stat) bool {
	return s.MTime != 0 && s.newest() < ix.Written-racySlack(s.MTime)
}

func (ix *statIndex) tree() coretree.Tree {
	f := make(coretree.Tree, len(ix.Files))
	for p, s := range ix.Files {
		f[p] = coretree.Entry{Hash: s.Hash, Mode: s.Mode}
	}
	return f
}

// readIndex reads the index at path; nil when missing or unreadable (a
// cache miss, never an error).
func readIndex(path string) *statIndex {
	data, ok, err := readSmallFile(path)
	if err != nil || !ok {
		return nil
	}
	ix, err := decodeIndex(data)
	if err != nil {
		return nil
	}
	return ix
}

func decodeIndex(data []byte) (*statIndex, error) {
	var ix *statIndex
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if ix == nil {
			head, err := decodeIndexHead(line)
			if err != nil {
				return nil, err
			}
			ix = head
			continue
		}
		// mode hash size mtime ctime ino path
		f := strings.SplitN(line, " ", 7)
		if len(f) != 7 {
			return nil, fmt.Errorf("bad index line")
		}
		hash, ok := coretree.ParseHash(f[1])
		mode, err1 := strconv.ParseUint(f[0], 8, 32)
		size, err2 := strconv.ParseInt(f[2], 10, 64)
		mt, err3 := strconv.ParseInt(f[3], 10, 64)
		ct, err4 := strconv.ParseInt(f[4], 10, 64)
		ino, err5 := strconv.ParseUint(f[5], 10, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
			return nil, fmt.Errorf("bad index line")
		}
		ix.Files[f[6]] = stat{Hash: hash, Mode: coretree.Mode(mode), Size: size, MTime: mt, CTime: ct, Ino: ino}
	}
	if ix == nil {
		return nil, fmt.Errorf("empty index")
	}
	return ix, nil
}

// decodeIndexHead reads the index's first line: the magic, the commit and
// when the index was written.
func decodeIndexHead(line string) (*statIndex, error) {
	head := strings.Fields(line)
	if len(head) != 4 || head[0]+" "+head[1] != indexMagic {
		return nil, fmt.Errorf("bad index header")
	}
	commit, ok := coretree.ParseHash(head[2])
	if !ok {
		return nil, fmt.Errorf("bad index header")
	}
	written, err := strconv.ParseInt(head[3], 10, 64)
	if err != nil {
		return nil, err
	}
	return &statIndex{Commit: commit, Written: written, Files: map[string]stat{}}, nil
}

func encodeIndex(ix *statIndex) []byte {
	var b bytes.Buffer
	b.Grow(64 + len(ix.Files)*120)
	fmt.Fprintf(&b, "%s %s %d\n", indexMagic, ix.Commit, ix.Written)
	for _, p := range slices.Sorted(maps.Keys(ix.Files)) {
		s := ix.Files[p]
		fmt.Fprintf(&b, "%o %s %d %d %d %d %s\n", uint32(s.Mode), s.Hash, s.Size, s.MTime, s.CTime, s.Ino, p)
	}
	return b.Bytes()
}

// writeIndex stores ix at path. Paths that cannot be written on one line
// make the index unwritable: it is skipped (a cache miss next time).
func writeIndex(path string, ix *statIndex) error {
	for p := range ix.Files {
		if strings.ContainsAny(p, "\n\r") {
			return nil
		}
	}
	return WriteFile(path, encodeIndex(ix))
}
