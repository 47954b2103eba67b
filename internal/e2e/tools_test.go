package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestToolsListCLI(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "tools", "list", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		CoreID string `json:"core_id"`
		Tools  []struct {
			Name           string `json:"name"`
			Source         string `json:"source"`
			Capability     string `json:"capability"`
			ApprovalPolicy string `json:"approval_policy"`
			Risk           string `json:"risk"`
			Provenance     string `json:"provenance"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, tl := range out.Tools {
		byName[tl.Name] = i
	}
	for _, want := range []string{"read_file", "write_file", "patch", "search_files", "todo", "clarify", "tools_list", "skills_list", "skill_view", "skill_manage", "session_search", "echo"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("catalog lacks %s", want)
		}
	}
	if w := out.Tools[byName["write_file"]]; w.Capability != "fs.write" || w.ApprovalPolicy != "prompt" || w.Provenance != "builtin:write_file" {
		t.Errorf("write_file entry %+v", w)
	}
	if a := out.Tools[byName["echo"]]; a.Source != "authored" || a.Provenance != "authored:agent/tools/echo" {
		t.Errorf("echo entry %+v", a)
	}
}

func TestWriteFileDeniedWithoutApprovalAndWrittenWithIt(t *testing.T) {
	e := newEnv(t)
	script := `[{"tool_calls":[{"id":"w1","name":"write_file","arguments":{"path":"notes.txt","content":"hello\n"}}]},{"content":"ok"}]`
	out, r := e.runJSON("--approve", "deny", "--fake-script", e.writeFile("s1.json", script), "write it")
	if r.code != 0 || len(out.ToolCalls) != 1 {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	if c := out.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted || !strings.HasPrefix(c.Content, "approval denied") {
		t.Fatalf("call %+v", c)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "notes.txt")); !os.IsNotExist(err) {
		t.Fatal("a denied write_file wrote the file")
	}
	out, _ = e.runJSON("--approve", "all", "--fake-script", e.writeFile("s2.json", script), "write it")
	if c := out.ToolCalls[0]; c.Status != "succeeded" {
		t.Fatalf("approved call %+v", c)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("file %q %v", b, err)
	}
	// read_file is auto-approved and reads it back.
	read := `[{"tool_calls":[{"name":"read_file","arguments":{"path":"notes.txt"}}]},{"content":"read"}]`
	out, _ = e.runJSON("--approve", "deny", "--fake-script", e.writeFile("s3.json", read), "read it")
	if c := out.ToolCalls[0]; c.Status != "succeeded" || !strings.Contains(c.Content, "hello") {
		t.Fatalf("read_file %+v", c)
	}
}

func TestPathEscapeAndInvalidArguments(t *testing.T) {
	e := newEnv(t)
	script := `[{"tool_calls":[
		{"name":"read_file","arguments":{"path":"../../etc/passwd"}},
		{"name":"read_file","arguments":{"path":7}},
		{"name":"write_file","arguments":{"path":".env","content":"X=1"}}]},
		{"content":"done"}]`
	out, r := e.runJSON("--approve", "all", "--fake-script", e.writeFile("s.json", script), "go")
	if r.code != 0 || len(out.ToolCalls) != 3 {
		t.Fatalf("exit %d %+v", r.code, out)
	}
	esc, bad, env := out.ToolCalls[0], out.ToolCalls[1], out.ToolCalls[2]
	if !esc.IsError || esc.ExecutionStarted {
		t.Errorf("escape %+v", esc)
	}
	if bad.Status != "invalid" || !strings.Contains(bad.Content, "/path") {
		t.Errorf("schema-invalid call %+v", bad)
	}
	if !env.IsError || env.ExecutionStarted {
		t.Errorf("sensitive write %+v", env)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, ".env")); !os.IsNotExist(err) {
		t.Fatal(".env was written")
	}
}

func TestAuthoredEchoTool(t *testing.T) {
	e := newEnv(t)
	script := `[{"tool_calls":[{"name":"echo","arguments":{"text":"ping"}}]}]`
	out, r := e.runJSON("--fake-script", e.writeFile("s.json", script), "echo")
	if r.code != 0 || len(out.ToolCalls) != 1 || out.ToolCalls[0].Status != "succeeded" || out.ToolCalls[0].Content != "ping" {
		t.Fatalf("exit %d %+v", r.code, out)
	}
	if out.Text != "[fake] tool result received: ping" {
		t.Fatalf("text %q", out.Text)
	}
}

// TestSecretNeverPersistedNorSentBack drives a real OpenAI-wire provider
// that makes the model pass a secret in tool arguments; the tool echoes it.
// Afterwards the secret is in no file of the runtime home and in no later
// request sent to the provider.
func TestSecretNeverPersistedNorSentBack(t *testing.T) {
	const secret = "sk-live-9f8e7d6c5b4a39281706"
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, string(body))
		n := len(requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			args, _ := json.Marshal(map[string]any{"text": "deploy --token " + secret + " now"})
			resp, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
				"role": "assistant", "content": "",
				"tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "echo", "arguments": string(args)}}},
			}}}})
			w.Write(resp)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"done"}}]}`)
	}))
	defer srv.Close()
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=sk-test-provider-key-000", "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	out, r := e.runJSON("--provider", "openai", "please deploy")
	if r.code != 0 || out.Outcome != "completed" || len(out.ToolCalls) != 1 {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	if strings.Contains(r.stdout, secret) {
		t.Fatal("the secret reached run --json output")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 2 {
		t.Fatalf("%d provider requests", len(requests))
	}
	if strings.Contains(requests[1], secret) {
		t.Fatalf("the secret was sent back to the provider: %s", requests[1])
	}
	if !strings.Contains(requests[1], "redacted") {
		t.Fatalf("second request should carry the redacted tool result: %s", requests[1])
	}
	assertNotInHome(t, e.home, secret)
}
