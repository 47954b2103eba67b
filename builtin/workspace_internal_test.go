package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testWorkspace builds a workspace with files, directories and symbolic
// links that lead inside, outside and round in a loop:
//
//	<base>/outside/secret.txt
//	<base>/ws/a.txt, sub/b.txt, sub/deep/c.txt
//	<base>/ws/in-file  -> sub/b.txt        (inside)
//	<base>/ws/in-dir   -> sub              (inside)
//	<base>/ws/out-file -> ../outside/secret.txt
//	<base>/ws/out-dir  -> <base>/outside   (absolute)
//	<base>/ws/dangling -> ../outside/nothing-yet
//	<base>/ws/loop1 -> loop2, loop2 -> loop1
//	<base>/ws/env-link -> .env
func testWorkspace(tb testing.TB) (w *workspace, base string) {
	tb.Helper()
	base = tb.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	for _, f := range []string{"outside/secret.txt", "ws/a.txt", "ws/sub/b.txt", "ws/sub/deep/c.txt", "ws/.env"} {
		p := filepath.Join(base, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	ws := filepath.Join(base, "ws")
	links := map[string]string{
		"in-file":  "sub/b.txt",
		"in-dir":   "sub",
		"out-file": "../outside/secret.txt",
		"out-dir":  filepath.Join(base, "outside"),
		"dangling": "../outside/nothing-yet",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"env-link": ".env",
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			tb.Skipf("symlinks unavailable: %v", err)
		}
	}
	w, err := newWorkspace(ws, []string{"Makefile"})
	if err != nil {
		tb.Fatal(err)
	}
	return w, base
}

func TestResolve(t *testing.T) {
	w, base := testWorkspace(t)
	ws := filepath.Join(base, "ws")
	tests := []struct {
		value, op string
		show      string // want on success
		reason    string // want on refusal
	}{
		{"a.txt", opRead, "a.txt", ""},
		{"", opRead, ".", ""},
		{".", opRead, ".", ""},
		{"./sub/../a.txt", opRead, "a.txt", ""},
		{"sub//deep/./c.txt", opRead, "sub/deep/c.txt", ""},
		{filepath.Join(ws, "sub", "b.txt"), opRead, "sub/b.txt", ""},
		{"new/dir/file.txt", opWrite, "new/dir/file.txt", ""},
		{"in-file", opRead, "sub/b.txt", ""},
		{"in-dir/deep/c.txt", opWrite, "sub/deep/c.txt", ""},
		// ".." after a link leaves the link's target, as the kernel does:
		// in-dir is sub, so in-dir/../a.txt is ws/a.txt.
		{"in-dir/../a.txt", opRead, "a.txt", ""},
		{"in-dir/deep/../../a.txt", opRead, "a.txt", ""},
		{"missing/../a.txt", opRead, "a.txt", ""},

		{"../outside/secret.txt", opRead, "", "workspace_escape"},
		{"..", opRead, "", "workspace_escape"},
		{"sub/../../outside", opWrite, "", "workspace_escape"},
		{filepath.Join(base, "outside", "secret.txt"), opRead, "", "workspace_escape"},
		{"/etc/passwd", opRead, "", "workspace_escape"},
		{"~/x", opRead, "", "workspace_escape"},
		{"out-file", opRead, "", "workspace_escape"},
		{"out-file", opWrite, "", "workspace_escape"},
		{"out-dir/secret.txt", opRead, "", "workspace_escape"},
		{"out-dir/new.txt", opWrite, "", "workspace_escape"},
		{"dangling", opWrite, "", "workspace_escape"},
		{"loop1", opRead, "", "symlink_loop"},
		{"loop1/x", opWrite, "", "symlink_loop"},

		{".env", opRead, "", "sensitive_path"},
		{"env-link", opRead, "", "sensitive_path"},
		{"sub/.env.local", opWrite, "", "sensitive_path"},
		{".git/config", opRead, "", "sensitive_path"},
		{"x/.ssh/id_rsa", opRead, "", "sensitive_path"},
		{"certs/server.PEM", opRead, "", "sensitive_path"},
		{"my_private.key", opRead, "", "sensitive_path"},
		{"Private-Key-backup.txt", opRead, "", "sensitive_path"},
		{".aws/credentials", opRead, "", "sensitive_path"},
		{".netrc", opWrite, "", "sensitive_path"},
		{"pyproject.toml", opRead, "pyproject.toml", ""},
		{"pyproject.toml", opWrite, "", "sensitive_path"},
		{"sub/UV.LOCK", opWrite, "", "sensitive_path"},
		{"makefile", opRead, "makefile", ""},
		{"sub/makefile", opWrite, "", "protected_file"},
		{"MAKEFILE", opWrite, "", "protected_file"},
	}
	for _, tt := range tests {
		t.Run(tt.op+":"+tt.value, func(t *testing.T) {
			got, out, ok := w.resolve(tt.value, tt.op)
			if tt.reason == "" {
				if !ok {
					t.Fatalf("refused: %q", out.Content)
				}
				if got.show != tt.show {
					t.Fatalf("show=%q, want %q", got.show, tt.show)
				}
				if !within(w.root, got.abs) {
					t.Fatalf("abs %q is outside %q", got.abs, w.root)
				}
				return
			}
			if ok {
				t.Fatalf("resolved to %q, want refusal %s", got.abs, tt.reason)
			}
			if out.Data["reason"] != tt.reason || out.Denial != "policy" || out.ExecutionStarted || !out.IsError {
				t.Fatalf("outcome %+v, want policy denial %s", out, tt.reason)
			}
		})
	}
}

func TestResolveMessages(t *testing.T) {
	w, _ := testWorkspace(t)
	for value, want := range map[string]string{
		"../x":                              "path escapes workspace: ../x",
		"out-file":                          "path escapes workspace: out-file",
		".env":                              "sensitive path denied: .env",
		"sub/Makefile":                      "write blocked for protected file: Makefile",
		"loop1":                             "path cannot be resolved: too many levels of symbolic links: loop1",
		"a\x00b":                            "invalid path: contains a NUL byte",
		strings.Repeat("a", maxPathBytes+1): "invalid path: 4097 bytes, limit 4096",
	} {
		_, out, ok := w.resolve(value, opWrite)
		if ok || out.Content != want {
			t.Errorf("resolve(%.20q): ok=%v %q, want %q", value, ok, out.Content, want)
		}
	}
}

func TestNewWorkspace(t *testing.T) {
	if _, err := newWorkspace("", nil); err != errNoWorkspace {
		t.Fatalf("empty workspace err=%v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := newWorkspace(file, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("file as workspace err=%v", err)
	}
	if _, err := newWorkspace(filepath.Join(file, "nope"), nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing workspace err=%v", err)
	}
}

func TestIsSensitive(t *testing.T) {
	for _, tt := range []struct {
		rel   string
		write bool
		want  bool
	}{
		{".", false, false},
		{"README.md", false, false},
		{"src/.gitignore", false, false},
		{"src/.github/workflows/ci.yml", false, false},
		{".git", false, true},
		{"a/.GIT/HEAD", false, true},
		{".venv/bin/python", false, true},
		{".demiurge/config.yaml", false, true},
		{".kube/config", false, true},
		{".envrc", false, true},
		{"app/.env.production", false, true},
		{".npmrc", false, true},
		{".pgpass", false, true},
		{".pypirc", false, true},
		{"id_ed25519", false, true},
		{"id_ed25519.pub", false, false},
		{"tls.key", false, true},
		{"keys/privatekey", false, true},
		{"keyboard-private.txt", false, true},
		{"pyproject.toml", false, false},
		{"pyproject.toml", true, true},
		{"uv.lock", true, true},
	} {
		if got := isSensitive(tt.rel, tt.write); got != tt.want {
			t.Errorf("isSensitive(%q, write=%v)=%v, want %v", tt.rel, tt.write, got, tt.want)
		}
	}
}
