package builtin

import (
	"path/filepath"
	"testing"
)

// FuzzResolvePath checks that resolution never panics and never admits a
// path outside the workspace, whatever the argument: the returned target
// lies inside the root, both as resolved and after the OS resolves it once
// more (the deepest existing ancestor, through filepath.EvalSymlinks).
func FuzzResolvePath(f *testing.F) {
	for _, seed := range []string{
		"a.txt", "", ".", "..", "../..", "/", "/etc/passwd", "~", "~/.ssh/id_rsa",
		"in-dir/../a.txt", "out-dir/x", "out-file", "dangling", "loop1/x",
		"sub/./deep/../../a.txt", "//sub///b.txt", "sub/deep/../../../outside",
		".env", "env-link", "a\x00b", "in-dir/../../outside/secret.txt",
	} {
		f.Add(seed)
	}
	w, _ := testWorkspace(f)
	f.Fuzz(func(t *testing.T, value string) {
		for _, op := range []string{opRead, opWrite} {
			got, out, ok := w.resolve(value, op)
			if !ok {
				if !out.IsError || out.ExecutionStarted {
					t.Fatalf("refusal of %q is not an error outcome: %+v", value, out)
				}
				continue
			}
			if !within(w.root, got.abs) {
				t.Fatalf("resolve(%q) = %q, outside %q", value, got.abs, w.root)
			}
			if rel, err := filepath.Rel(w.root, got.abs); err != nil || filepath.ToSlash(rel) != got.show {
				t.Fatalf("resolve(%q): show %q does not name %q", value, got.show, got.abs)
			}
			if real := evalDeepest(got.abs); !within(w.root, real) {
				t.Fatalf("resolve(%q) = %q, which the OS resolves to %q outside %q", value, got.abs, real, w.root)
			}
			if isSensitive(got.show, op == opWrite) {
				t.Fatalf("resolve(%q) admitted sensitive %q", value, got.show)
			}
		}
	})
}

// evalDeepest resolves the deepest existing ancestor of p with
// filepath.EvalSymlinks and appends the rest.
func evalDeepest(p string) string {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(cur) == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}
