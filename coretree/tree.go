package coretree

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Hash is a git object id (SHA-1) of a blob or a tree.
type Hash [20]byte

// ParseHash decodes a 40-digit hex object id; ok is false for anything
// else.
func ParseHash(s string) (h Hash, ok bool) {
	if len(s) != 2*len(h) {
		return Hash{}, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, false
	}
	return h, true
}

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero id (no object).
func (h Hash) IsZero() bool { return h == Hash{} }

// Mode is a git file mode.
type Mode uint32

// The modes an agents tree holds.
const (
	Regular    Mode = 0o100644
	Executable Mode = 0o100755
	Symlink    Mode = 0o120000
)

// String is git's seven-digit octal form, e.g. "0100644".
func (m Mode) String() string { return fmt.Sprintf("%07o", uint32(m)) }

// Entry is one file of a tree.
type Entry struct {
	Hash Hash
	Mode Mode
}

// Tree maps slash paths relative to the agents root to their files. A
// Tree handed out by the storage may be shared: never modify one you did
// not make.
type Tree map[string]Entry

// ChangeKind says how a path differs between two trees.
type ChangeKind string

// Change kinds.
const (
	Added    ChangeKind = "added"
	Modified ChangeKind = "modified"
	Deleted  ChangeKind = "deleted"
)

// Change is one changed path, relative to the agents root.
type Change struct {
	Path string     `json:"path"`
	Kind ChangeKind `json:"change"`
}

// Diff lists the paths whose entries differ between old and new, sorted
// by path.
func Diff(old, new Tree) []Change {
	var out []Change
	for p, e := range new {
		if o, ok := old[p]; !ok {
			out = append(out, Change{p, Added})
		} else if o != e {
			out = append(out, Change{p, Modified})
		}
	}
	for p := range old {
		if _, ok := new[p]; !ok {
			out = append(out, Change{p, Deleted})
		}
	}
	SortChanges(out)
	return out
}

// SortChanges sorts changes by path.
func SortChanges(changes []Change) {
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}

// HasCore reports whether t holds core id: a manifest <id>/agent.yaml.
func (t Tree) HasCore(id string) bool {
	_, ok := t[id+"/agent.yaml"]
	return ok
}

// HasAnyUnder reports whether t holds a file under the directory dir.
func (t Tree) HasAnyUnder(dir string) bool {
	for p := range t {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// TopDirs lists the top-level directories of t, sorted: the cores, and
// whatever else is not a top-level file.
func (t Tree) TopDirs() []string {
	seen := map[string]bool{}
	var out []string
	for p := range t {
		if top, _, nested := strings.Cut(p, "/"); nested && !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	slices.Sort(out)
	return out
}
