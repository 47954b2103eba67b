package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/coretree"
)

// A whole core is stored as one pack, a small change as loose objects, and
// every object reads back from either, also in a repository opened anew.
func TestLargeTreesArePackedAndSmallChangesStayLoose(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("agents/core/agent/slot%02d/slot.yaml", i)] = fmt.Sprintf("id: slot%02d\n", i)
	}
	r, p := newStorage(t, files)
	if packs := packFiles(t, p.GitDir); len(packs) != 2 {
		t.Fatalf("a 30-file core left %v in objects/pack, want one pack and its index", packs)
	}
	if loose := looseObjects(t, p.GitDir); len(loose) != 0 {
		t.Fatalf("loose objects after the first revision: %v, want none", loose)
	}

	tree := coretree.Tree{}
	for rel, body := range files {
		tree[rel] = coretree.Entry{Hash: BlobHash([]byte(body)), Mode: coretree.Regular}
	}
	edited := "agents/core/agent/slot00/slot.yaml"
	tree[edited] = coretree.Entry{Hash: BlobHash([]byte("id: edited\n")), Mode: coretree.Regular}
	h, err := r.StoreTree(tree, map[string][]byte{edited: []byte("id: edited\n")})
	if err != nil {
		t.Fatal(err)
	}
	if packs := packFiles(t, p.GitDir); len(packs) != 2 {
		t.Fatalf("a one-file change wrote a pack: %v", packs)
	}
	if loose := looseObjects(t, p.GitDir); len(loose) < 2 {
		t.Fatalf("a one-file change left no loose objects: %v", loose)
	}

	c, err := r.WriteCommit(h, nil, "edit\n")
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := reopened.Files(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Fatalf("tree read back with %d files, want %d", len(got), len(files))
	}
	for rel, want := range files {
		if rel == edited {
			want = "id: edited\n"
		}
		data, err := reopened.Blob(got[rel].Hash)
		if err != nil || string(data) != want {
			t.Fatalf("%s read back %q, %v; want %q", rel, data, err, want)
		}
	}
}

func packFiles(t *testing.T, gitDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(gitDir, "objects", "pack"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func looseObjects(t *testing.T, gitDir string) []string {
	t.Helper()
	var names []string
	root := filepath.Join(gitDir, "objects")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if !d.IsDir() && len(rel) == 41 && !strings.HasPrefix(rel, "pack") {
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
