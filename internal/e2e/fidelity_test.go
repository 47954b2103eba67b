package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fidelity with the original's own test vectors (its tests/security and
// tests/tools), run through the CLI.

// TestReadOutsideWorkspaceAsks: read_file of ~/note.txt is a read outside
// the workspace: the operator is asked at risk high, with the path and the
// reason; an allowed read returns the file, a denied one is an approval
// denial (not "path escapes workspace"). The runtime home stays
// unreadable whatever the answer.
func TestReadOutsideWorkspaceAsks(t *testing.T) {
	e := newEnv(t)
	userHome := filepath.Join(filepath.Dir(e.home), "user")
	if err := os.MkdirAll(userHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userHome, "note.txt"), []byte("a note from home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.extra = append(e.extra, "HOME="+userHome)
	note := filepath.ToSlash(filepath.Join(userHome, "note.txt"))
	summary := "Read file " + note + " (outside the workspace)"
	calls := `[{"name":"read_file","arguments":{"path":"~/note.txt"}}]`

	allowed := e.scripted("all", calls).ToolCalls[0]
	if allowed.Status != "succeeded" || allowed.Content != "a note from home\n" {
		t.Fatalf("--approve all: %+v", allowed)
	}
	denied := e.scripted("deny", calls).ToolCalls[0]
	if denied.Status != "denied" || denied.ExecutionStarted || denied.Content != "approval denied: "+summary ||
		strings.Contains(denied.Content, "escapes workspace") {
		t.Fatalf("--approve deny: %+v", denied)
	}

	script := e.writeFile("ask.json", `[{"tool_calls":`+calls+`},{"content":"done"}]`)
	out, r := e.runJSONStdin("1\n", "--approve", "ask", "--fake-script", script, "read my note")
	if r.code != 0 || len(out.ToolCalls) != 1 || out.ToolCalls[0].Status != "succeeded" {
		t.Fatalf("--approve ask: exit %d %+v\n%s", r.code, out, r.stderr)
	}
	if !strings.Contains(r.stderr, "Approval needed: "+summary+" (risk high") {
		t.Fatalf("the question does not name the path, the reason and risk high:\n%s", r.stderr)
	}

	// The runtime home is private to the Host: refused before any
	// question, even under --approve all.
	private := e.scripted("all", `[{"name":"read_file","arguments":{"path":"`+filepath.ToSlash(filepath.Join(e.home, "config.yaml"))+`"}},
		{"name":"search_files","arguments":{"query":"a","path":"`+filepath.ToSlash(e.home)+`"}}]`)
	for _, c := range private.ToolCalls {
		if c.Status != "denied" || c.ExecutionStarted || !strings.HasPrefix(c.Content, "path is private to the Host: ") {
			t.Errorf("runtime home read %+v", c)
		}
	}
}

// TestSearchFilesFindsTextWithNUL: a text file with NUL bytes is searched
// and its match found.
func TestSearchFilesFindsTextWithNUL(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "data.log"), []byte("alpha\x00beta\nthe needle is here\x00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.scripted("deny", `[{"name":"search_files","arguments":{"query":"needle"}}]`).ToolCalls[0]
	if c.Status != "succeeded" || !strings.HasPrefix(c.Content, "data.log:2: the needle is here") {
		t.Fatalf("search_files: %+v", c)
	}
}

// TestArgumentErrorsAreTheToolsOwn: arguments the schema refuses are
// answered with the tool's own sentence, exactly.
func TestArgumentErrorsAreTheToolsOwn(t *testing.T) {
	e := newEnv(t)
	out := e.scripted("deny", `[{"name":"delegate_task","arguments":{"goal":"look around","context_mode":"shared"}},
		{"name":"task_control","arguments":{"task_id":"task_x","command":"retry"}},
		{"name":"task_status","arguments":{}}]`)
	for i, want := range []string{"unsupported context_mode: shared", "unsupported task_control command: retry", "task_id is required"} {
		if c := out.ToolCalls[i]; c.Status != "invalid" || c.ExecutionStarted || c.Content != want {
			t.Errorf("call %d: %+v, want exactly %q", i, c, want)
		}
	}
}
