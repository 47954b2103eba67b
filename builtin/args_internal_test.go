package builtin

import (
	"encoding/json"
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

func TestPositiveInt(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want int64
	}{
		{nil, 50}, {float64(0), 50}, {float64(-3), 50}, {float64(7.9), 7}, {float64(500), 200},
		{"12", 12}, {"x", 50}, {json.Number("30"), 30}, {true, 50},
	} {
		if got := positiveInt(map[string]any{"n": tt.v}, "n", 50, 200); got != tt.want {
			t.Errorf("positiveInt(%#v)=%d, want %d", tt.v, got, tt.want)
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
