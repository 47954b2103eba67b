package builtin_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func TestWriteFile(t *testing.T) {
	e := newEnv(t)
	out := e.call("write_file", map[string]any{"path": "new/dir/a.txt", "content": "héllo"})
	wantOK(t, out)
	if out.Content != "wrote 5 chars to new/dir/a.txt" || out.Data["path"] != "new/dir/a.txt" || out.Data["chars"] != 5 {
		t.Fatalf("outcome %q %v", out.Content, out.Data)
	}
	if got := e.read("new/dir/a.txt"); got != "héllo" {
		t.Fatalf("content %q", got)
	}
	if runtime.GOOS != "windows" {
		info, _ := os.Stat(e.path("new/dir/a.txt"))
		if got := info.Mode().Perm(); got != 0o644 {
			t.Fatalf("new file mode %v, want 0644", got)
		}
	}

	// Overwriting keeps the existing mode.
	p := e.write("script.sh", "old")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	wantOK(t, e.call("write_file", map[string]any{"path": "script.sh", "content": "new"}))
	if got := e.read("script.sh"); got != "new" {
		t.Fatalf("content %q", got)
	}
	if info, _ := os.Stat(p); runtime.GOOS != "windows" && info.Mode().Perm() != 0o750 {
		t.Fatalf("mode %v after overwrite, want 0750", info.Mode().Perm())
	}

	// Writing through a link inside the workspace writes its target.
	symlink(t, "script.sh", e.path("alias"))
	wantOK(t, e.call("write_file", map[string]any{"path": "alias", "content": "via link"}))
	if got := e.read("script.sh"); got != "via link" {
		t.Fatalf("link target content %q", got)
	}
	if info, err := os.Lstat(e.path("alias")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link itself was replaced")
	}
	if hasTemp(listTree(t, e.ws)) {
		t.Fatalf("temporary files left: %v", listTree(t, e.ws))
	}
}

func TestWriteFileRefusals(t *testing.T) {
	e := newEnv(t)
	e.deps.ProtectedNames = []string{"go.sum"}
	outsideDir := mkdir(t, filepath.Join(filepath.Dir(e.ws), "outside"))
	outsideFile := filepath.Join(outsideDir, "victim.txt")
	if err := os.WriteFile(outsideFile, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir(t, e.path("dir"))
	symlink(t, outsideFile, e.path("file-out"))
	symlink(t, outsideDir, e.path("dir-out"))
	symlink(t, "../outside/new.txt", e.path("dangling-out"))
	symlink(t, "l2", e.path("l1"))
	symlink(t, "l1", e.path("l2"))
	before := listTree(t, e.ws)

	for _, tt := range []struct {
		args       map[string]any
		want, deny string
	}{
		{map[string]any{"path": "../outside/victim.txt", "content": "x"}, "path escapes workspace: ../outside/victim.txt", "policy"},
		{map[string]any{"path": outsideFile, "content": "x"}, "path escapes workspace: " + outsideFile, "policy"},
		{map[string]any{"path": "file-out", "content": "x"}, "path escapes workspace: file-out", "policy"},
		{map[string]any{"path": "dir-out/victim.txt", "content": "x"}, "path escapes workspace: dir-out/victim.txt", "policy"},
		{map[string]any{"path": "dangling-out", "content": "x"}, "path escapes workspace: dangling-out", "policy"},
		{map[string]any{"path": "l1", "content": "x"}, "path cannot be resolved: too many levels of symbolic links: l1", "policy"},
		{map[string]any{"path": ".env", "content": "x"}, "sensitive path denied: .env", "policy"},
		{map[string]any{"path": "a/.git/hooks/pre-commit", "content": "x"}, "sensitive path denied: a/.git/hooks/pre-commit", "policy"},
		{map[string]any{"path": "keys/id_rsa", "content": "x"}, "sensitive path denied: keys/id_rsa", "policy"},
		{map[string]any{"path": "pyproject.toml", "content": "x"}, "sensitive path denied: pyproject.toml", "policy"},
		{map[string]any{"path": "sub/GO.SUM", "content": "x"}, "write blocked for protected file: GO.SUM", "policy"},
		{map[string]any{"path": "dir", "content": "x"}, "path is a directory: dir", ""},
		{map[string]any{"path": ".", "content": "x"}, "path is a directory: .", ""},
		{map[string]any{"path": "no/parent.txt", "content": "x", "create_parent_dirs": false}, "parent directory does not exist: no", ""},
	} {
		t.Run(tt.args["path"].(string), func(t *testing.T) {
			wantRefused(t, e.call("write_file", tt.args), tt.want, tt.deny)
		})
	}
	if b, _ := os.ReadFile(outsideFile); string(b) != "untouched" {
		t.Fatalf("outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outsideDir, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("a file was created outside the workspace")
	}
	if after := listTree(t, e.ws); !slices.Equal(before, after) {
		t.Fatalf("workspace changed by refused writes:\nbefore %v\nafter  %v", before, after)
	}
}

// TestWriteFileReadOnlyDirKeepsOldContent: a write that cannot complete
// leaves the previous content and no temporary file. As root, directory
// permissions do not bind, so the test runs itself as an unprivileged user.
func TestWriteFileReadOnlyDirKeepsOldContent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("directory permissions differ on windows")
	}
	if os.Geteuid() == 0 {
		runUnprivileged(t, "TestWriteFileReadOnlyDirKeepsOldContent")
		return
	}
	e := newEnv(t)
	p := e.write("locked/data.txt", "old content")
	if err := os.Chmod(filepath.Dir(p), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Dir(p), 0o755) })

	for _, tool := range []string{"write_file", "patch"} {
		args := map[string]any{"path": "locked/data.txt", "content": "new content", "old": "old", "new": "new"}
		out := e.call(tool, args)
		if !out.IsError {
			t.Fatalf("%s into a read-only directory succeeded: %q", tool, out.Content)
		}
		if got := e.read("locked/data.txt"); got != "old content" {
			t.Fatalf("%s: content %q after failed write, want the old content", tool, got)
		}
		if names := listTree(t, filepath.Dir(p)); hasTemp(names) || len(names) != 2 {
			t.Fatalf("%s: directory holds %v, want only data.txt", tool, names)
		}
	}
}

func TestPatch(t *testing.T) {
	e := newEnv(t)
	p := e.write("a.txt", "one\ntwo\nthree\ntwo\n")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	out := e.call("patch", map[string]any{"path": "a.txt", "old": "two", "new": "2", "count": 1})
	wantOK(t, out)
	wantDiff := "--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n two"
	if out.Content != wantDiff || out.Data["diff"] != wantDiff || out.Data["path"] != "a.txt" {
		t.Fatalf("content=%q data=%v, want %q", out.Content, out.Data, wantDiff)
	}
	if got := e.read("a.txt"); got != "one\n2\nthree\ntwo\n" {
		t.Fatalf("file %q", got)
	}
	if info, _ := os.Stat(p); runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", info.Mode().Perm())
	}

	wantOK(t, e.call("patch", map[string]any{"path": "a.txt", "old": "e", "new": "E"}))
	if got := e.read("a.txt"); got != "onE\n2\nthrEE\ntwo\n" {
		t.Fatalf("replace all: file %q", got)
	}
	out = e.call("patch", map[string]any{"path": "a.txt", "old": "two", "new": "two"})
	wantOK(t, out)
	if out.Content != "patched a.txt" {
		t.Fatalf("unchanged patch content %q", out.Content)
	}

	e.write(".env", "A=1")
	for _, tt := range []struct {
		args       map[string]any
		want, deny string
	}{
		{map[string]any{"path": "a.txt", "old": "", "new": "x"}, "old text is required", ""},
		{map[string]any{"path": "a.txt", "old": "zzz", "new": "x"}, "old text not found in a.txt", ""},
		{map[string]any{"path": "nope.txt", "old": "a", "new": "b"}, "path does not exist: nope.txt", ""},
		{map[string]any{"path": "../a.txt", "old": "a", "new": "b"}, "path escapes workspace: ../a.txt", "policy"},
		{map[string]any{"path": ".env", "old": "A", "new": "B"}, "sensitive path denied: .env", "policy"},
	} {
		wantRefused(t, e.call("patch", tt.args), tt.want, tt.deny)
	}
	if e.read(".env") != "A=1" {
		t.Fatal("sensitive file patched")
	}
}

// write_file reports the unified diff of what it changed (for the tool
// card): a new file is all additions, an overwrite the changed lines, a
// rewrite with the same content no diff at all.
func TestWriteFileDiff(t *testing.T) {
	e := newEnv(t)
	out := e.call("write_file", map[string]any{"path": "notes.txt", "content": "one\ntwo\n"})
	wantOK(t, out)
	if got, want := out.Data["diff"], "--- a/notes.txt\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two"; got != want {
		t.Fatalf("new file diff %q, want %q", got, want)
	}
	out = e.call("write_file", map[string]any{"path": "notes.txt", "content": "one\nthree\n"})
	wantOK(t, out)
	if got, want := out.Data["diff"], "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three"; got != want {
		t.Fatalf("overwrite diff %q, want %q", got, want)
	}
	out = e.call("write_file", map[string]any{"path": "notes.txt", "content": "one\nthree\n"})
	if got := out.Data["diff"]; got != "" {
		t.Fatalf("unchanged rewrite diff %q, want empty", got)
	}
}
