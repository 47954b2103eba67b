package gitrepo

import (
	"os"
	"path/filepath"
	"testing"
)

// The watch is quiet after Arm until anything watched changes: a file's
// content, a new file in a directory created after Arm, a ref, the state
// directory; and never quiet before Arm or after Close.
func TestWatchSeesEveryKindOfChange(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, p Paths)
	}{
		{"edit a file", func(t *testing.T, p Paths) { write(t, filepath.Join(p.Checkout, "a", "agent.yaml"), "changed") }},
		{"touch a file's mode", func(t *testing.T, p Paths) {
			if err := os.Chmod(filepath.Join(p.Checkout, "a", "agent.yaml"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"add a file in a new directory", func(t *testing.T, p Paths) {
			write(t, filepath.Join(p.Checkout, "a", "agent", "skills", "new", "SKILL.md"), "x")
		}},
		{"remove a file", func(t *testing.T, p Paths) {
			if err := os.Remove(filepath.Join(p.Checkout, "a", "agent", "soul.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"rename into the tree", func(t *testing.T, p Paths) {
			outside := filepath.Join(filepath.Dir(p.Checkout), "outside.md")
			write(t, outside, "x")
			if err := os.Rename(outside, filepath.Join(p.Checkout, "a", "agent", "moved.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"move a ref", func(t *testing.T, p Paths) { write(t, filepath.Join(p.GitDir, "refs", "demiurge", "live"), "0000") }},
		{"write the state directory", func(t *testing.T, p Paths) { write(t, p.journal(), "{}") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, p := newStorage(t, map[string]string{"a/agent.yaml": "id: a\n", "a/agent/soul.md": "soul\n"})
			w := r.NewWatch()
			t.Cleanup(func() { _ = w.Close() })
			if w.Quiet() {
				t.Fatal("quiet before Arm")
			}
			if err := w.Arm(); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if !w.Quiet() {
					t.Fatal("not quiet right after Arm with nothing changed")
				}
			}
			c.change(t, p)
			if w.Quiet() {
				t.Fatal("quiet after the change")
			}
			if w.Quiet() {
				t.Fatal("quiet again after a change without a new Arm")
			}
			if err := w.Arm(); err != nil {
				t.Fatal(err)
			}
			if !w.Quiet() {
				t.Fatal("not quiet after re-arming")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.Quiet() {
				t.Fatal("quiet after Close")
			}
		})
	}
}

// A reading of a file is not a change.
func TestWatchIgnoresReads(t *testing.T) {
	r, p := newStorage(t, map[string]string{"a/agent.yaml": "id: a\n"})
	w := r.NewWatch()
	t.Cleanup(func() { _ = w.Close() })
	if err := w.Arm(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(p.Checkout, "a", "agent.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(p.Checkout); err != nil {
		t.Fatal(err)
	}
	if !w.Quiet() {
		t.Fatal("a read made the watch noisy")
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
