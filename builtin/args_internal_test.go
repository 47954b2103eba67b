package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTruncateText(t *testing.T) {
	for _, tt := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc\n...[truncated 1 chars]"},
		{"ééé", 2, "éé\n...[truncated 1 chars]"},
		{"", 0, ""},
		{"ab", 0, "\n...[truncated 2 chars]"},
	} {
		if got := truncateText(tt.s, tt.limit); got != tt.want {
			t.Errorf("truncateText(%q, %d)=%q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}

// TestPositive: an absent (zero) or negative argument takes the default,
// a large one the maximum. Arguments that are not integers never get here:
// the schema refuses them and typed decoding would not accept them.
func TestPositive(t *testing.T) {
	for _, tt := range []struct{ v, want int64 }{{0, 50}, {-3, 50}, {7, 7}, {30, 30}, {500, 200}} {
		if got := positive(tt.v, 50, 200); got != tt.want {
			t.Errorf("positive(%d)=%d, want %d", tt.v, got, tt.want)
		}
	}
}

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
	if got := linkOnPath(root, filepath.FromSlash("refs/a.md")); got != "refs" {
		t.Errorf("linkOnPath=%q, want refs", got)
	}
}
