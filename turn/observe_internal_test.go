package turn

import (
	"strings"
	"testing"
)

func TestShorten(t *testing.T) {
	long := strings.Repeat("a", 200)
	cases := []struct {
		in    string
		limit int
		want  string
	}{
		{"  one\n\ttwo  three ", 160, "one two three"},
		{long, 160, strings.Repeat("a", 146) + "...[truncated]"},
		{"héllo wörld", 5, "héllo"},
		{"abcdefghijklmnopqrstuvwxyz", 14, "abcdefghijklmn"},
		{"", 10, ""},
	}
	for _, c := range cases {
		if got := Shorten(c.in, c.limit); got != c.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}

func TestArgumentSummary(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"terminal", map[string]any{"command": "ls -la"}, "$ ls -la"},
		{"terminal", map[string]any{}, "running terminal"},
		{"terminal", map[string]any{"command": "curl --token=abc123 x"}, "$ curl --token=<redacted> x"},
		{"patch", map[string]any{"path": "a/b.go", "old": "x"}, "patch: a/b.go"},
		{"read_file", map[string]any{"file_path": "c.txt"}, "read_file: c.txt"},
		{"write_file", map[string]any{}, "write_file"},
		{"search_files", map[string]any{"query": "x", "max_results": 3}, `{"max_results":3,"query":"x"}`},
		{"tools_list", nil, "running"},
	}
	for _, c := range cases {
		if got := argumentSummary(c.name, c.args); got != c.want {
			t.Errorf("argumentSummary(%s, %v) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

func TestTerminalStreamsAndTail(t *testing.T) {
	data := map[string]any{"output": map[string]any{
		"stdout": map[string]any{"total_chars": 30}, "stderr": map[string]any{"total_chars": 5},
	}}
	content := "exit_code: 1\nstdout:\nfirst\nstderr:\nnot a section\nlast\n\nstderr:\noops\n"
	out, errs := terminalStreams(content, data)
	if out != "first\nstderr:\nnot a section\nlast\n" || errs != "oops\n" {
		t.Fatalf("streams %q / %q", out, errs)
	}
	quiet := map[string]any{"output": map[string]any{"stdout": map[string]any{"total_chars": 0}, "stderr": map[string]any{"total_chars": 0}}}
	if out, errs := terminalStreams("exit_code: 0", quiet); out != "" || errs != "" {
		t.Fatalf("quiet streams %q / %q", out, errs)
	}
	if got := tail("1\n2\n3\n4", 2); got != "3\n4" {
		t.Fatalf("tail %q", got)
	}
	if got := tail("only", 3); got != "only" {
		t.Fatalf("short tail %q", got)
	}
}
