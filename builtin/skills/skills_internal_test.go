package skills

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
)

func TestNoLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "references", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "references", "a.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("references", filepath.Join(dir, "refs")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink("a.md", filepath.Join(dir, "references", "b.md")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for rel, ok := range map[string]bool{
		"references/a.md": true,
		"references/b.md": false, // the file is a link
		"refs/a.md":       false, // a directory on the way is a link
		"references/sub":  false, // not a regular file
		"references/c.md": false, // missing
	} {
		if got := noLinks(root, filepath.FromSlash(rel)) == nil; got != ok {
			t.Errorf("noLinks(%s) ok=%v, want %v", rel, got, ok)
		}
	}
	if got := rootfs.LinkOnPath(root, filepath.FromSlash("refs/a.md")); got != "refs" {
		t.Errorf("linkOnPath=%q, want refs", got)
	}
}
