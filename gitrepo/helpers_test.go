package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/coretree"
)

// newStorage makes a repository whose first live revision holds files,
// with a live checkout holding them too.
func newStorage(t *testing.T, files map[string]string) (*Repo, Paths) {
	t.Helper()
	dir := t.TempDir()
	p := Paths{Checkout: filepath.Join(dir, "agents"), GitDir: filepath.Join(dir, "core.git"), Lock: filepath.Join(dir, "core.lock")}
	tree, content := coretree.Tree{}, map[string][]byte{}
	for rel, body := range files {
		abs := filepath.Join(p.Checkout, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		tree[rel] = coretree.Entry{Hash: BlobHash([]byte(body)), Mode: coretree.Regular}
		content[rel] = []byte(body)
	}
	r := New(p, Options{})
	if err := r.Create(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Initialize(tree, content, "init\n"); err != nil {
		t.Fatal(err)
	}
	return r, p
}
