package builtin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func todoPath(home, sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return filepath.Join(home, "runtime", "session-state", hex.EncodeToString(sum[:]), "todo.json")
}

func TestTodo(t *testing.T) {
	e := newEnv(t)
	steps := []struct {
		args    map[string]any
		content string
		isError bool
	}{
		{map[string]any{}, "(no todos)", false},
		{map[string]any{"action": "add", "text": "  write tests  "}, "todo added: write tests", false},
		{map[string]any{"action": "add", "text": "ship"}, "todo added: ship", false},
		{map[string]any{"action": "complete", "index": 1}, "todo completed: 1", false},
		{map[string]any{"action": "list"}, "1. [x] write tests\n2. [ ] ship", false},
		{map[string]any{"action": "complete", "index": 3}, "todo index out of range: 3", true},
		{map[string]any{"action": "complete"}, "todo index out of range: 0", true},
		{map[string]any{"action": "add", "text": " "}, "text is required for todo add", true},
		{map[string]any{"action": "archive"}, "unsupported todo action: archive", true},
		{map[string]any{"action": "LIST"}, "1. [x] write tests\n2. [ ] ship", false},
	}
	for i, s := range steps {
		out := e.call("todo", s.args)
		if out.Content != s.content || out.IsError != s.isError || out.ExecutionStarted == s.isError {
			t.Fatalf("step %d %v: %q error=%v started=%v, want %q error=%v", i, s.args, out.Content, out.IsError, out.ExecutionStarted, s.content, s.isError)
		}
	}
	out := e.call("todo", map[string]any{"action": "list"})
	todos := out.Data["todos"].([]map[string]any)
	if len(todos) != 2 || todos[0]["text"] != "write tests" || todos[0]["done"] != true || todos[1]["done"] != false {
		t.Fatalf("data %v", out.Data)
	}

	// State lives under the hash of the session id, private to the Host.
	p := todoPath(e.home, "session_1")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var stored []map[string]any
	if err := json.Unmarshal(raw, &stored); err != nil || len(stored) != 2 {
		t.Fatalf("todo.json %s: %v", raw, err)
	}
	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700, filepath.Dir(filepath.Dir(p)): 0o700} {
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
				t.Errorf("%s mode %v, want %v", path, info.Mode().Perm(), want)
			}
		}
	}

	// Another session has its own list.
	other := *e
	other.tc.SessionID = "../../session_2"
	if got := other.call("todo", nil).Content; got != "(no todos)" {
		t.Fatalf("other session sees %q", got)
	}
	wantOK(t, other.call("todo", map[string]any{"action": "add", "text": "theirs"}))
	if _, err := os.Stat(todoPath(e.home, "../../session_2")); err != nil {
		t.Fatalf("hashed state path: %v", err)
	}

	wantOK(t, e.call("todo", map[string]any{"action": "clear"}))
	if got := e.call("todo", nil).Content; got != "(no todos)" {
		t.Fatalf("after clear %q", got)
	}
	if got := other.call("todo", nil).Content; got != "1. [ ] theirs" {
		t.Fatalf("clear touched the other session: %q", got)
	}
	if names := listTree(t, filepath.Join(e.home, "runtime")); hasTemp(names) {
		t.Fatalf("temporary files left: %v", names)
	}
}

func TestTodoStateRefusals(t *testing.T) {
	e := newEnv(t)
	p := todoPath(e.home, "session_1")
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := e.call("todo", nil)
	if !out.IsError || !strings.Contains(out.Content, "todo.json is not a JSON list") {
		t.Fatalf("corrupt state: %q", out.Content)
	}
	wantOK(t, e.call("todo", map[string]any{"action": "clear"}))
	wantOK(t, e.call("todo", map[string]any{"action": "add", "text": "again"}))

	// A symbolic link in the state path is refused, not followed.
	elsewhere := t.TempDir()
	state := filepath.Join(e.home, "runtime", "session-state")
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	symlink(t, elsewhere, state)
	out = e.call("todo", map[string]any{"action": "add", "text": "redirected"})
	if !out.IsError || !strings.Contains(out.Content, "symbolic links are not accepted") {
		t.Fatalf("linked state dir: %q", out.Content)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("state written through the link: %v", entries)
	}

	e.deps.Home = ""
	wantRefused(t, e.call("todo", nil), "todo is not available: no runtime home is configured", "")
}
