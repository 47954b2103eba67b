package coretree

import (
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	a, b := Hash{1}, Hash{2}
	old := Tree{"x/agent.yaml": {a, Regular}, "x/gone.md": {a, Regular}, "x/run.sh": {a, Regular}}
	new := Tree{"x/agent.yaml": {a, Regular}, "x/new.md": {b, Regular}, "x/run.sh": {a, Executable}}
	want := []Change{{"x/gone.md", Deleted}, {"x/new.md", Added}, {"x/run.sh", Modified}}
	if got := Diff(old, new); !slices.Equal(got, want) {
		t.Fatalf("Diff = %v, want %v", got, want)
	}
	if got := Diff(old, old); len(got) != 0 {
		t.Fatalf("Diff of a tree with itself = %v", got)
	}
}

func TestHashAndMode(t *testing.T) {
	const s = "0123456789abcdef0123456789abcdef01234567"
	h, ok := ParseHash(s)
	if !ok || h.String() != s || h.IsZero() {
		t.Fatalf("ParseHash(%q) = %v, %v", s, h, ok)
	}
	for _, bad := range []string{"", s[:39], s + "0", "g123456789abcdef0123456789abcdef01234567"} {
		if _, ok := ParseHash(bad); ok {
			t.Fatalf("ParseHash(%q) accepted", bad)
		}
	}
	if Regular.String() != "0100644" || Executable.String() != "0100755" || Symlink.String() != "0120000" {
		t.Fatalf("modes %s %s %s", Regular, Executable, Symlink)
	}
}

func TestCores(t *testing.T) {
	tree := Tree{"agent.yaml": {}, "a/agent.yaml": {}, "a/agent/SOUL.md": {}, "b/lib/x.txt": {}}
	if got := tree.TopDirs(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("TopDirs = %v", got)
	}
	if !tree.HasCore("a") || tree.HasCore("b") || !tree.HasAnyUnder("b") || tree.HasAnyUnder("c") {
		t.Fatal("HasCore / HasAnyUnder")
	}
}
