package workspace

import (
	"path/filepath"
	"testing"
)

// FuzzResolvePath checks that resolution never panics, never admits a
// write outside the workspace or to a sensitive path, never admits any
// path private to the Host, and marks every read outside the workspace or
// of a sensitive path as such (the operator is asked about those): both
// as resolved and after the OS resolves the path once more (the deepest
// existing ancestor, through filepath.EvalSymlinks).
func FuzzResolvePath(f *testing.F) {
	for _, seed := range []string{
		"a.txt", "", ".", "..", "../..", "/", "/etc/passwd", "~", "~/.ssh/id_rsa",
		"in-dir/../a.txt", "out-dir/x", "out-file", "dangling", "loop1/x",
		"sub/./deep/../../a.txt", "//sub///b.txt", "sub/deep/../../../outside",
		".env", "env-link", "a\x00b", "in-dir/../../outside/secret.txt",
		"key-link", "../home/runtime/host.key", "../home.private/terminal-home/x", "../home/../home/config.yaml",
	} {
		f.Add(seed)
	}
	w, _ := testWorkspace(f)
	f.Fuzz(func(t *testing.T, value string) {
		for _, op := range []string{OpRead, OpWrite} {
			got, out, ok := w.Resolve(value, op)
			if !ok {
				if !out.IsError || out.ExecutionStarted {
					t.Fatalf("refusal of %q is not an error outcome: %+v", value, out)
				}
				continue
			}
			real := evalDeepest(got.Abs)
			if w.Hides(got.Abs) || w.Hides(real) {
				t.Fatalf("resolve(%q) = %q admitted a path private to the Host", value, got.Abs)
			}
			inside := Within(w.root, got.Abs)
			if got.Outside == inside || (op == OpWrite && !inside) {
				t.Fatalf("resolve(%q, %s) = %q outside=%v, root %q", value, op, got.Abs, got.Outside, w.root)
			}
			if got.Outside {
				if got.Show != filepath.ToSlash(got.Abs) || got.Sensitive != IsSensitive(got.Show, false) {
					t.Fatalf("resolve(%q): outside read %+v is not named by its path or misses its sensitivity", value, got)
				}
				continue
			}
			if rel, err := filepath.Rel(w.root, got.Abs); err != nil || filepath.ToSlash(rel) != got.Show {
				t.Fatalf("resolve(%q): show %q does not name %q", value, got.Show, got.Abs)
			}
			if !Within(w.root, real) {
				t.Fatalf("resolve(%q) = %q, which the OS resolves to %q outside %q", value, got.Abs, real, w.root)
			}
			if s := IsSensitive(got.Show, op == OpWrite); s && (op == OpWrite || !got.Sensitive) {
				t.Fatalf("resolve(%q, %s) admitted sensitive %q unmarked", value, op, got.Show)
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
