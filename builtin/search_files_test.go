package builtin_test

import (
	"path/filepath"
	"strings"
	"testing"
)

func searchEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.write("a.txt", "alpha\nNeedle one\nbeta\n")
	e.write("a/b.txt", "needle two\r\nneedle three\n")
	e.write("a/c.go", "package needle\n")
	e.write("z.md", "no match here\n")
	e.write(".env", "needle=secret\n")
	e.write(".git/config", "needle\n")
	e.write("keys/server.pem", "needle\n")
	e.write("bin.dat", "needle\x00binary")
	e.write("long.txt", strings.Repeat("x", 500)+"needle"+strings.Repeat("y", 500)+"\n")
	e.write("deep.txt", strings.Repeat("a", 200000)+"\nneedle after the window\n")
	outside := filepath.Join(filepath.Dir(e.ws), "outside")
	writeFiles(t, outside, map[string]string{"o.txt": "needle outside\n"})
	symlink(t, filepath.Join(outside, "o.txt"), e.path("link-out.txt"))
	symlink(t, outside, e.path("dir-out"))
	symlink(t, "z.md", e.path("link-in.txt"))
	return e
}

func TestSearchFilesContent(t *testing.T) {
	e := searchEnv(t)
	out := e.call("search_files", map[string]any{"query": "needle"})
	wantOK(t, out)
	want := strings.Join([]string{
		"a/b.txt:1: needle two",
		"a/b.txt:2: needle three",
		"a/c.go:1: package needle",
		"bin.dat:1: needle\x00binary",
		"long.txt:1: " + strings.Repeat("x", 300),
	}, "\n")
	if out.Content != want {
		t.Fatalf("content=\n%q\nwant\n%q", out.Content, want)
	}
	matches := out.Data["matches"].([]map[string]any)
	// .env, .git/config and keys/server.pem are sensitive, deep.txt
	// matches only after its first 200,000 characters, link-out.txt and
	// dir-out lead outside the workspace; bin.dat, NUL bytes and all, is
	// text (the spec skips no binary files).
	if len(matches) != 5 || matches[0]["type"] != "content" || matches[0]["path"] != "a/b.txt" || matches[0]["line"] != 1 ||
		matches[0]["text"] != "needle two" || out.Data["truncated"] != false {
		t.Fatalf("data=%v", out.Data)
	}

	insensitive := e.call("search_files", map[string]any{"query": "NEEDLE", "case_sensitive": false, "pattern": "*.txt"})
	wantOK(t, insensitive)
	if !strings.HasPrefix(insensitive.Content, "a.txt:2: Needle one\na/b.txt:1: needle two") || strings.Contains(insensitive.Content, "c.go") {
		t.Fatalf("case-insensitive content=\n%s", insensitive.Content)
	}

	if m := matches[3]; m["path"] != "bin.dat" || m["text"] != "needle\x00binary" {
		t.Fatalf("NUL-byte file match %v", m)
	}

	limited := e.call("search_files", map[string]any{"query": "needle", "max_results": 2})
	if limited.Content != "a/b.txt:1: needle two\na/b.txt:2: needle three" || limited.Data["truncated"] != true {
		t.Fatalf("limited content=%q truncated=%v", limited.Content, limited.Data["truncated"])
	}

	single := e.call("search_files", map[string]any{"query": "needle", "path": "a/c.go"})
	if single.Content != "a/c.go:1: package needle" {
		t.Fatalf("single file content=%q", single.Content)
	}
	none := e.call("search_files", map[string]any{"query": "absent", "path": "a"})
	if none.Content != "(no matches)" || len(none.Data["matches"].([]map[string]any)) != 0 {
		t.Fatalf("no match content=%q data=%v", none.Content, none.Data)
	}
}

func TestSearchFilesNames(t *testing.T) {
	e := searchEnv(t)
	out := e.call("search_files", map[string]any{"target": "name", "pattern": "*.txt"})
	wantOK(t, out)
	// Sorted by full path ("a.txt" < "a/b.txt"); link-in.txt is listed by
	// its target z.md, which the pattern does not match; link-out.txt
	// leads outside and is skipped.
	if want := "a.txt\na/b.txt\ndeep.txt\nlong.txt"; out.Content != want {
		t.Fatalf("names=\n%s\nwant\n%s", out.Content, want)
	}
	all := e.call("search_files", map[string]any{"target": "name"})
	if want := "a.txt\na/b.txt\na/c.go\nbin.dat\ndeep.txt\nz.md\nlong.txt\nz.md"; all.Content != want {
		t.Fatalf("all names=\n%s\nwant\n%s", all.Content, want)
	}
	both := e.call("search_files", map[string]any{"target": "both", "query": "c.go"})
	if both.Content != "a/c.go" {
		t.Fatalf("both content=%q", both.Content)
	}
	byName := e.call("search_files", map[string]any{"target": "name", "query": "B.TXT", "case_sensitive": false})
	if byName.Content != "a/b.txt" {
		t.Fatalf("insensitive name content=%q", byName.Content)
	}
	m := byName.Data["matches"].([]map[string]any)[0]
	if m["type"] != "name" || m["path"] != "a/b.txt" || m["is_dir"] != false {
		t.Fatalf("name match %v", m)
	}
}

func TestSearchFilesRefusals(t *testing.T) {
	e := searchEnv(t)
	for _, tt := range []struct {
		args       map[string]any
		want, deny string
	}{
		{map[string]any{"query": "x", "target": "lines"}, "unsupported search target: lines", ""},
		{map[string]any{"target": "content"}, "query is required for content search", ""},
		{map[string]any{"target": "both", "query": ""}, "query is required for content search", ""},
		{map[string]any{"query": "x", "target": " Lines "}, "unsupported search target: lines", ""},
		{map[string]any{"query": "x", "path": "nope"}, "path does not exist: nope", ""},
		{map[string]any{"query": "x", "path": "../nope"}, "path does not exist: " + filepath.ToSlash(filepath.Join(filepath.Dir(e.ws), "nope")), ""},
		{map[string]any{"query": "x", "path": "../home"}, "path is private to the Host: ../home", "policy"},
		{map[string]any{"query": "x", "pattern": strings.Repeat("*", 1025)}, "invalid pattern: 1025 bytes, limit 1024", ""},
		{map[string]any{"query": "x", "pattern": "[z-a]"}, "invalid pattern: [z-a]", ""},
	} {
		wantRefused(t, e.call("search_files", tt.args), tt.want, tt.deny)
	}
}

// TestSearchFilesNULBytes: a text file with NUL bytes in it is searched
// like any other, and its match found (the original reads every file as
// text).
func TestSearchFilesNULBytes(t *testing.T) {
	e := newEnv(t)
	e.write("log.txt", "start\x00\x00\nerror: disk full\x00\n")
	out := e.call("search_files", map[string]any{"query": "disk full"})
	wantOK(t, out)
	if out.Content != "log.txt:2: error: disk full\x00" {
		t.Fatalf("content=%q", out.Content)
	}
}

// TestSearchFilesOutsideAndSensitive: once approved, a search outside the
// workspace walks only below its own root and names entries by absolute
// path; include_sensitive searches sensitive files too; the runtime home
// is never searched.
func TestSearchFilesOutsideAndSensitive(t *testing.T) {
	e := searchEnv(t)
	base := filepath.Dir(e.ws)
	writeFiles(t, e.home, map[string]string{"runtime/host.key": "needle in the home\n", "notes.txt": "needle in the home\n"})

	out := e.call("search_files", map[string]any{"query": "needle", "path": ".."})
	wantOK(t, out)
	for _, m := range out.Data["matches"].([]map[string]any) {
		p := m["path"].(string)
		if !strings.HasPrefix(p, filepath.ToSlash(base)+"/") {
			t.Errorf("outside match %q is not named by its absolute path", p)
		}
		if strings.HasPrefix(p, filepath.ToSlash(e.home)+"/") || strings.Contains(p, ".env") || strings.Contains(p, ".git/") {
			t.Errorf("outside search reached %q", p)
		}
	}
	if !strings.Contains(out.Content, filepath.ToSlash(filepath.Join(base, "outside", "o.txt"))+":1: needle outside") ||
		!strings.Contains(out.Content, filepath.ToSlash(filepath.Join(base, "ws", "a", "b.txt"))+":1: needle two") {
		t.Fatalf("outside search content=\n%s", out.Content)
	}

	// A path that leads back into the workspace is an ordinary search.
	sub := e.call("search_files", map[string]any{"query": "needle", "path": "../ws/a"})
	if sub.Content != "a/b.txt:1: needle two\na/b.txt:2: needle three\na/c.go:1: package needle" {
		t.Fatalf("sub search content=\n%s", sub.Content)
	}

	wide := e.call("search_files", map[string]any{"query": "needle", "include_sensitive": true})
	wantOK(t, wide)
	for _, want := range []string{".env:1: needle=secret", ".git/config:1: needle", "keys/server.pem:1: needle"} {
		if !strings.Contains(wide.Content, want) {
			t.Errorf("include_sensitive: %q missing from\n%s", want, wide.Content)
		}
	}
	single := e.call("search_files", map[string]any{"query": "needle", "path": "../outside/o.txt"})
	if single.Content != filepath.ToSlash(filepath.Join(base, "outside", "o.txt"))+":1: needle outside" {
		t.Fatalf("outside file content=%q", single.Content)
	}
}
