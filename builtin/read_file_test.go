package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	e := newEnv(t)
	e.write("notes.txt", "hello\nworld\n")
	e.write("utf8.txt", "héllo wörld ✓")
	e.write("bad.txt", "a\xffb\xe2\x82")
	e.write("long.txt", strings.Repeat("x", 25000))
	mkdir(t, e.path("dir"))

	tests := []struct {
		name    string
		args    map[string]any
		content string
		data    map[string]any
	}{
		{"whole file", map[string]any{"path": "notes.txt"}, "hello\nworld\n",
			map[string]any{"path": "notes.txt", "offset": int64(0), "end": int64(12), "total_chars": int64(12), "truncated": false}},
		{"window", map[string]any{"path": "notes.txt", "offset": 6, "limit": 5}, "world\n...[truncated 1 chars]",
			map[string]any{"offset": int64(6), "end": int64(11), "total_chars": int64(12), "truncated": true}},
		{"characters, not bytes", map[string]any{"path": "utf8.txt", "offset": 1, "limit": 4}, "éllo\n...[truncated 8 chars]",
			map[string]any{"end": int64(5), "total_chars": int64(13)}},
		{"invalid bytes replaced", map[string]any{"path": "bad.txt"}, "a\uFFFDb\uFFFD\uFFFD",
			map[string]any{"total_chars": int64(5)}},
		{"offset past the end", map[string]any{"path": "notes.txt", "offset": 100}, "",
			map[string]any{"offset": int64(100), "end": int64(12), "total_chars": int64(12)}},
		{"negative offset is 0", map[string]any{"path": "notes.txt", "offset": -4, "limit": 5}, "hello\n...[truncated 7 chars]",
			map[string]any{"offset": int64(0), "end": int64(5)}},
		{"limit capped at 20000", map[string]any{"path": "long.txt", "limit": 50000}, strings.Repeat("x", 20000) + "\n...[truncated 5000 chars]",
			map[string]any{"end": int64(20000), "total_chars": int64(25000)}},
		{"limit 0 is the default", map[string]any{"path": "long.txt", "limit": 0}, strings.Repeat("x", 20000) + "\n...[truncated 5000 chars]", nil},
		{"absolute inside", map[string]any{"path": e.path("notes.txt")}, "hello\nworld\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := e.call("read_file", tt.args)
			wantOK(t, out)
			if out.Content != tt.content {
				t.Fatalf("content=%q, want %q", out.Content, tt.content)
			}
			for k, want := range tt.data {
				if got := out.Data[k]; got != want {
					t.Errorf("data[%s]=%#v, want %#v", k, got, want)
				}
			}
		})
	}
}

func TestReadFileRefusals(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(filepath.Dir(e.ws), "outside.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, e.home+".private", map[string]string{"key": "k"})
	e.deps.Sandbox.Hidden = []string{e.home + ".private"}
	mkdir(t, e.path("dir"))
	symlink(t, filepath.Join(e.home, "agents", "demo", "agent.yaml"), e.path("link-home"))
	symlink(t, "loop-b", e.path("loop-a"))
	symlink(t, "loop-a", e.path("loop-b"))

	for _, tt := range []struct {
		path, want, denial string
	}{
		{"missing.txt", "path does not exist: missing.txt", ""},
		{"dir", "path is not a file: dir", ""},
		{"", "path is not a file: .", ""},
		{"../missing.txt", "path does not exist: " + filepath.ToSlash(filepath.Join(filepath.Dir(e.ws), "missing.txt")), ""},
		{"loop-a", "path cannot be resolved: too many levels of symbolic links: loop-a", "policy"},
		// The runtime home (Deps.Home) and every path the sandbox hides are
		// private to the Host: refused, never asked about.
		{"../home/agents/demo/agent.yaml", "path is private to the Host: ../home/agents/demo/agent.yaml", "policy"},
		{e.home, "path is private to the Host: " + e.home, "policy"},
		{"../home.private/key", "path is private to the Host: ../home.private/key", "policy"},
		{"link-home", "path is private to the Host: link-home", "policy"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			wantRefused(t, e.call("read_file", map[string]any{"path": tt.path}), tt.want, tt.denial)
		})
	}
	e.tc.Workspace = ""
	wantRefused(t, e.call("read_file", map[string]any{"path": "x"}), "read_file: no workspace is configured for this turn", "")
}

// TestReadFileOutsideAndSensitive: once the dispatcher has the read
// approved, read_file reads outside the workspace ("~" is the user's home)
// and sensitive paths, naming an outside file by its absolute path.
func TestReadFileOutsideAndSensitive(t *testing.T) {
	e := newEnv(t)
	userHome := mkdir(t, filepath.Join(filepath.Dir(e.ws), "user"))
	t.Setenv("HOME", userHome)
	writeFiles(t, userHome, map[string]string{"note.txt": "home note\n"})
	outside := filepath.Join(filepath.Dir(e.ws), "outside.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, e.path("link-out"))
	e.write(".env", "TOKEN=x")
	e.write("sub/.git/config", "[core]")
	for _, tt := range []struct{ path, content, show string }{
		{"~/note.txt", "home note\n", filepath.ToSlash(filepath.Join(userHome, "note.txt"))},
		{"../outside.txt", "outside", filepath.ToSlash(outside)},
		{outside, "outside", filepath.ToSlash(outside)},
		{"link-out", "outside", filepath.ToSlash(outside)},
		{".env", "TOKEN=x", ".env"},
		{"sub/.git/config", "[core]", "sub/.git/config"},
	} {
		out := e.call("read_file", map[string]any{"path": tt.path})
		wantOK(t, out)
		if out.Content != tt.content || out.Data["path"] != tt.show {
			t.Errorf("%s: content=%q path=%v, want %q %q", tt.path, out.Content, out.Data["path"], tt.content, tt.show)
		}
	}
}

// TestReadFileLargeStopsAtWindow: past countAheadBytes the rest of the file
// is not read; the note gives its size in bytes and the next offset.
func TestReadFileLargeStopsAtWindow(t *testing.T) {
	e := newEnv(t)
	f, err := os.Create(e.path("big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("head "); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := e.call("read_file", map[string]any{"path": "big.bin", "limit": 10})
	wantOK(t, out)
	want := "head \x00\x00\x00\x00\x00\n...[truncated: 8388598 more bytes not read; continue with offset=10]"
	if out.Content != want {
		t.Fatalf("content=%q, want %q", out.Content, want)
	}
	if _, ok := out.Data["total_chars"]; ok || out.Data["total_bytes"] != int64(8<<20) || out.Data["truncated"] != true {
		t.Fatalf("data=%v, want total_bytes and no total_chars", out.Data)
	}
}
