package workspace

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
//	<base>/ws/key-link -> <base>/home/runtime/host.key
//	<base>/home/…, <base>/home.private/… (hidden: the Host's private paths)
func testWorkspace(tb testing.TB) (w *Workspace, base string) {
	tb.Helper()
	base = tb.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	for _, f := range []string{"outside/secret.txt", "ws/a.txt", "ws/sub/b.txt", "ws/sub/deep/c.txt", "ws/.env",
		"home/config.yaml", "home/runtime/host.key", "home.private/terminal-home/x"} {
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
		"key-link": filepath.Join(base, "home", "runtime", "host.key"),
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			tb.Skipf("symlinks unavailable: %v", err)
		}
	}
	w, err := New(ws, []string{"Makefile"}, []string{filepath.Join(base, "home"), filepath.Join(base, "home.private")})
	if err != nil {
		tb.Fatal(err)
	}
	return w, base
}

func TestResolve(t *testing.T) {
	w, base := testWorkspace(t)
	ws := filepath.Join(base, "ws")
	t.Setenv("HOME", filepath.Join(base, "user"))
	out := func(p string) string { return filepath.ToSlash(filepath.Join(base, p)) }
	tests := []struct {
		value, op string
		show      string // want on success
		reason    string // want on refusal
		outside   bool   // a read outside the workspace
		sensitive bool   // a sensitive read
	}{
		{value: "a.txt", op: OpRead, show: "a.txt"},
		{value: "", op: OpRead, show: "."},
		{value: ".", op: OpRead, show: "."},
		{value: "./sub/../a.txt", op: OpRead, show: "a.txt"},
		{value: "sub//deep/./c.txt", op: OpRead, show: "sub/deep/c.txt"},
		{value: filepath.Join(ws, "sub", "b.txt"), op: OpRead, show: "sub/b.txt"},
		{value: "new/dir/file.txt", op: OpWrite, show: "new/dir/file.txt"},
		{value: "in-file", op: OpRead, show: "sub/b.txt"},
		{value: "in-dir/deep/c.txt", op: OpWrite, show: "sub/deep/c.txt"},
		// ".." after a link leaves the link's target, as the kernel does:
		// in-dir is sub, so in-dir/../a.txt is ws/a.txt.
		{value: "in-dir/../a.txt", op: OpRead, show: "a.txt"},
		{value: "in-dir/deep/../../a.txt", op: OpRead, show: "a.txt"},
		{value: "missing/../a.txt", op: OpRead, show: "a.txt"},

		// Reads may leave the workspace (the operator is asked); they are
		// named by their absolute real path. Writes may not.
		{value: "../outside/secret.txt", op: OpRead, show: out("outside/secret.txt"), outside: true},
		{value: "..", op: OpRead, show: filepath.ToSlash(base), outside: true},
		{value: filepath.Join(base, "outside", "secret.txt"), op: OpRead, show: out("outside/secret.txt"), outside: true},
		{value: "~/x", op: OpRead, show: out("user/x"), outside: true},
		{value: "~", op: OpRead, show: out("user"), outside: true},
		{value: "out-file", op: OpRead, show: out("outside/secret.txt"), outside: true},
		{value: "out-dir/secret.txt", op: OpRead, show: out("outside/secret.txt"), outside: true},
		{value: "dangling", op: OpRead, show: out("outside/nothing-yet"), outside: true},
		{value: "../outside/.ssh/id_rsa", op: OpRead, show: out("outside/.ssh/id_rsa"), outside: true, sensitive: true},
		{value: "sub/../../outside", op: OpWrite, reason: "workspace_escape"},
		{value: "out-file", op: OpWrite, reason: "workspace_escape"},
		{value: "out-dir/new.txt", op: OpWrite, reason: "workspace_escape"},
		{value: "dangling", op: OpWrite, reason: "workspace_escape"},
		{value: "~/x", op: OpWrite, reason: "workspace_escape"},
		{value: "loop1", op: OpRead, reason: "symlink_loop"},
		{value: "loop1/x", op: OpWrite, reason: "symlink_loop"},

		// The Host's private paths are refused for every operation, however
		// they are named.
		{value: filepath.Join(base, "home", "config.yaml"), op: OpRead, reason: "host_private"},
		{value: "../home", op: OpRead, reason: "host_private"},
		{value: "../home/runtime/host.key", op: OpRead, reason: "host_private"},
		{value: "key-link", op: OpRead, reason: "host_private"},
		{value: "key-link", op: OpWrite, reason: "host_private"},
		{value: "../home.private/terminal-home/x", op: OpRead, reason: "host_private"},

		// Sensitive reads are flagged (the operator is asked); sensitive
		// writes are refused.
		{value: ".env", op: OpRead, show: ".env", sensitive: true},
		{value: "env-link", op: OpRead, show: ".env", sensitive: true},
		{value: ".git/config", op: OpRead, show: ".git/config", sensitive: true},
		{value: "x/.ssh/id_rsa", op: OpRead, show: "x/.ssh/id_rsa", sensitive: true},
		{value: "certs/server.PEM", op: OpRead, show: "certs/server.PEM", sensitive: true},
		{value: "my_private.key", op: OpRead, show: "my_private.key", sensitive: true},
		{value: "Private-Key-backup.txt", op: OpRead, show: "Private-Key-backup.txt", sensitive: true},
		{value: ".aws/credentials", op: OpRead, show: ".aws/credentials", sensitive: true},
		{value: "sub/.env.local", op: OpWrite, reason: "sensitive_path"},
		{value: ".netrc", op: OpWrite, reason: "sensitive_path"},
		{value: ".git/config", op: OpWrite, reason: "sensitive_path"},
		{value: "pyproject.toml", op: OpRead, show: "pyproject.toml"},
		{value: "pyproject.toml", op: OpWrite, reason: "sensitive_path"},
		{value: "sub/UV.LOCK", op: OpWrite, reason: "sensitive_path"},
		{value: "makefile", op: OpRead, show: "makefile"},
		{value: "sub/makefile", op: OpWrite, reason: "protected_file"},
		{value: "MAKEFILE", op: OpWrite, reason: "protected_file"},
	}
	for _, tt := range tests {
		t.Run(tt.op+":"+tt.value, func(t *testing.T) {
			got, out, ok := w.Resolve(tt.value, tt.op)
			if tt.reason == "" {
				if !ok {
					t.Fatalf("refused: %q", out.Content)
				}
				if got.Show != tt.show || got.Outside != tt.outside || got.Sensitive != tt.sensitive {
					t.Fatalf("show=%q outside=%v sensitive=%v, want %q %v %v", got.Show, got.Outside, got.Sensitive, tt.show, tt.outside, tt.sensitive)
				}
				if Within(w.root, got.Abs) == tt.outside {
					t.Fatalf("abs %q inside %q: %v, want %v", got.Abs, w.root, !tt.outside, !tt.outside)
				}
				return
			}
			if ok {
				t.Fatalf("resolved to %q, want refusal %s", got.Abs, tt.reason)
			}
			if out.Data["reason"] != tt.reason || out.Denial != "policy" || out.ExecutionStarted || !out.IsError {
				t.Fatalf("outcome %+v, want policy denial %s", out, tt.reason)
			}
		})
	}
}

// TestResolveUnknownHome: "~" without a known home is refused, never read
// as a name inside the workspace.
func TestResolveUnknownHome(t *testing.T) {
	w, _ := testWorkspace(t)
	t.Setenv("HOME", "")
	_, out, ok := w.Resolve("~/note.txt", OpRead)
	if ok || out.Content != "invalid path: ~/note.txt: the user's home directory is unknown" || out.Denial != "" {
		t.Fatalf("ok=%v %+v", ok, out)
	}
}

// TestHides pins the sandbox's rule: the deeper of a hidden path and the
// workspace wins, the workspace a tie.
func TestHides(t *testing.T) {
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	home := filepath.Join(base, "home")
	for _, d := range []string{"home/workspace", "home/runtime", "home/agents/demo", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hidden := []string{home, home + ".private", filepath.Join(home, "config.yaml"), filepath.Join(home, "runtime"), filepath.Join(home, "agents")}
	for _, tt := range []struct {
		root, path string
		want       bool
	}{
		// A workspace inside the home: its files are visible, the rest of
		// the home is not.
		{"home/workspace", "home/workspace/a.txt", false},
		{"home/workspace", "home/workspace", false},
		{"home/workspace", "home/notes.txt", true},
		{"home/workspace", "home/runtime/host.key", true},
		{"home/workspace", "home", true},
		{"home/workspace", "home.private/x", true},
		{"home/workspace", "elsewhere/x", false},
		// A workspace at the home: the home's own entries stay hidden.
		{"home", "home/notes.txt", false},
		{"home", "home/config.yaml", true},
		{"home", "home/runtime/runtime.sqlite3", true},
		{"home", "home/agents/demo/agent.yaml", true},
		{"home", "home/workspace/a.txt", false},
		// A workspace inside a hidden entry (an evolve run's copy of the
		// agents): visible inside, hidden around it.
		{"home/agents/demo", "home/agents/demo/agent.yaml", false},
		{"home/agents/demo", "home/agents/other", true},
		// "home.private" is not below "home".
		{"elsewhere", "home.privateer/x", false},
	} {
		w, err := New(filepath.Join(base, tt.root), nil, hidden)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Hides(filepath.Join(base, tt.path)); got != tt.want {
			t.Errorf("workspace %s: hides(%s)=%v, want %v", tt.root, tt.path, got, tt.want)
		}
	}
}

func TestResolveMessages(t *testing.T) {
	w, _ := testWorkspace(t)
	for value, want := range map[string]string{
		"../x":                              "path escapes workspace: ../x",
		"out-file":                          "path escapes workspace: out-file",
		".env":                              "sensitive path denied: .env",
		"key-link":                          "path is private to the Host: key-link",
		"sub/Makefile":                      "write blocked for protected file: Makefile",
		"loop1":                             "path cannot be resolved: too many levels of symbolic links: loop1",
		"a\x00b":                            "invalid path: contains a NUL byte",
		strings.Repeat("a", maxPathBytes+1): "invalid path: 4097 bytes, limit 4096",
	} {
		_, out, ok := w.Resolve(value, OpWrite)
		if ok || out.Content != want {
			t.Errorf("resolve(%.20q): ok=%v %q, want %q", value, ok, out.Content, want)
		}
	}
}

func TestNewWorkspace(t *testing.T) {
	if _, err := New("", nil, nil); err != errNoWorkspace {
		t.Fatalf("empty workspace err=%v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(file, nil, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("file as workspace err=%v", err)
	}
	if _, err := New(filepath.Join(file, "nope"), nil, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
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
		if got := IsSensitive(tt.rel, tt.write); got != tt.want {
			t.Errorf("isSensitive(%q, write=%v)=%v, want %v", tt.rel, tt.write, got, tt.want)
		}
	}
}
