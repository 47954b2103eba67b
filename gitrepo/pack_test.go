package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
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

// The packs flush writes are git's own format: git itself verifies the
// pack against its index and finds the repository whole, with objects of
// every size class of the entry header (under 16 bytes, under 2 KiB, and
// past 1 MiB), and every object reads back through the storage.
func TestPacksAreVerifiedByGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	files := map[string]string{"agents/core/agent/big.txt": strings.Repeat("0123456789abcdef", 70_000)}
	for i := range 20 {
		files[fmt.Sprintf("agents/core/agent/f%02d.txt", i)] = strings.Repeat("x", i*100)
	}
	r, p := newStorage(t, files)
	packs := packFiles(t, p.GitDir)
	if len(packs) != 2 {
		t.Fatalf("objects/pack holds %v, want one pack and its index", packs)
	}
	for _, name := range packs {
		if strings.HasSuffix(name, ".idx") {
			out, err := exec.Command(gitBin, "-C", p.GitDir, "verify-pack", "-v", filepath.Join(p.GitDir, "objects", "pack", name)).CombinedOutput()
			if err != nil {
				t.Fatalf("git verify-pack: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "non delta: ") {
				t.Fatalf("git verify-pack printed no object count:\n%s", out)
			}
		}
	}
	if out, err := exec.Command(gitBin, "-C", p.GitDir, "fsck", "--full", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	live, err := r.Live()
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Files(live)
	if err != nil {
		t.Fatal(err)
	}
	for rel, body := range files {
		data, err := r.Blob(got[rel].Hash)
		if err != nil || string(data) != body {
			t.Fatalf("%s reads back %d bytes (%v), want %d", rel, len(data), err, len(body))
		}
	}
}
