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

// TestSecretDiscoveredOnceStaysSecretForTheTurn: a password found in one
// tool result (config.ini) is redacted when the same value comes back bare
// a step later (notes.txt, a command's output and its artifact, the
// model's final text), in the JSON output and in every file of the home.
// Credentials a command prints (aws_secret_access_key=…, the provider's
// key written by the model) never reach the artifact raw either.
func TestSecretDiscoveredOnceStaysSecretForTheTurn(t *testing.T) {
	const (
		password = "Tr0ub4dor-e2e-7713"
		awsKey   = "wJalrXUtnFEMI-e2e-K7MDENG-bPxRfiCY"
		provKey  = "sk-e2e-provider-key-5150-abcdef"
	)
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=" + provKey}
	for name, body := range map[string]string{
		"config.ini": "[db]\nhost = db.internal\npassword=" + password + "\n",
		"notes.txt":  "remember " + password + " for the migration\n",
		"creds.env":  "aws_secret_access_key=" + awsKey + "\n",
	} {
		if err := os.WriteFile(filepath.Join(e.workspace, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The AWS key is never in the arguments: only the output reveals it,
	// and cut prints it bare on a later line of the same stream.
	printCreds := "cat notes.txt creds.env; echo " + provKey + "; cut -d= -f2 creds.env"
	steps := []map[string]any{
		{"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{"path": "config.ini"}}}},
		{"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{"path": "notes.txt"}}}},
		{"tool_calls": []any{map[string]any{"name": "terminal", "arguments": map[string]any{"command": printCreds}}}},
		{"content": "The database password is " + password + " and the key " + awsKey},
	}
	script, _ := json.Marshal(steps)
	out, r := e.runJSON("--approve", "all", "--fake-script", e.writeFile("script.json", string(script)), "go")
	if r.code != 0 || out.Outcome != "completed" || len(out.ToolCalls) != 3 {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	for i, c := range out.ToolCalls {
		if c.Status != "succeeded" {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
	if !strings.Contains(out.ToolCalls[1].Content, "remember <redacted") {
		t.Fatalf("notes.txt came back as %q", out.ToolCalls[1].Content)
	}
	if !strings.Contains(out.Text, "The database password is <redacted") {
		t.Fatalf("final text %q", out.Text)
	}
	artifacts := 0
	filepath.Walk(filepath.Join(e.home, "runtime", "artifacts"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			artifacts++
		}
		return nil
	})
	if artifacts == 0 {
		t.Fatal("the command stored no artifact")
	}
	for _, secret := range []string{password, awsKey, provKey} {
		if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
			t.Errorf("%.6s… reached the CLI output:\n%s", secret, r.stdout)
		}
		assertNotInHome(t, e.home, secret)
	}
}

// TestStepToolCallBound: a model step with more tool calls than the bound
// runs the first 32; each of the rest gets an invalid result that says so,
// and the turn goes on to its final answer.
func TestStepToolCallBound(t *testing.T) {
	e := newEnv(t)
	calls := make([]any, 40)
	for i := range calls {
		calls[i] = map[string]any{"name": "tools_list", "arguments": map[string]any{}}
	}
	script, _ := json.Marshal([]map[string]any{{"tool_calls": calls}, {"content": "done"}})
	out, r := e.runJSON("--approve", "deny", "--fake-script", e.writeFile("script.json", string(script)), "go")
	if r.code != 0 || out.Outcome != "completed" || out.Text != "done" || len(out.ToolCalls) != 40 {
		t.Fatalf("exit %d outcome %s text %q, %d calls: %s", r.code, out.Outcome, out.Text, len(out.ToolCalls), r.stderr)
	}
	for i, c := range out.ToolCalls {
		switch {
		case i < 32 && c.Status != "succeeded":
			t.Fatalf("call %d within the bound: %+v", i, c)
		case i >= 32 && (c.Status != "invalid" || c.ExecutionStarted || !strings.Contains(c.Content, "at most 32 tool calls")):
			t.Fatalf("call %d past the bound: %+v", i, c)
		}
	}

	// The operator's bound holds too.
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte("limits: {tool_calls_per_step: 3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, r = e.runJSON("--approve", "deny", "--fake-script", e.writeFile("script.json", string(script)), "go")
	if r.code != 0 || out.Outcome != "completed" || len(out.ToolCalls) != 40 || out.ToolCalls[2].Status != "succeeded" || out.ToolCalls[3].Status != "invalid" {
		t.Fatalf("with limits.tool_calls_per_step 3: exit %d %s", r.code, r.stderr)
	}
}

// TestArtifactBound: a command's output past the operator's per-stream
// bound is counted but not stored; the artifact ends with the marker.
func TestArtifactBound(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte("limits: {artifact_mb_per_stream: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := e.scripted("all", `[{"name":"terminal","arguments":{"command":"head -c 3000000 /dev/zero | tr '\\0' y"}}]`)
	if c := out.ToolCalls[0]; c.Status != "succeeded" {
		t.Fatalf("terminal: %+v", c)
	}
	var stored []string
	filepath.Walk(filepath.Join(e.home, "runtime", "artifacts"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			stored = append(stored, p)
		}
		return nil
	})
	if len(stored) != 1 {
		t.Fatalf("artifacts %v", stored)
	}
	b, err := os.ReadFile(stored[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), strings.Repeat("y", 1<<20)) || len(b) > 1<<20+200 || !strings.Contains(string(b[1<<20:]), "kept the first 1048576 of 3000000 bytes") {
		t.Fatalf("artifact of %d bytes ends %q", len(b), b[len(b)-100:])
	}
}

// TestStreamedReplyIsRedacted: in chat the reply streams to the terminal as
// the provider produces it; a secret a tool revealed earlier in the turn
// is redacted there too, whatever the deltas' boundaries.
func TestStreamedReplyIsRedacted(t *testing.T) {
	const password = "Str3amed-e2e-secret-4242"
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "config.ini"), []byte("password="+password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := json.Marshal([]map[string]any{
		{"tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{"path": "config.ini"}}}},
		{"content": "it is " + password + " and again " + password},
	})
	e.extra = []string{"DEMIURGE_FAKE_SCRIPT=" + e.writeFile("script.json", string(script))}
	r := e.run("show me\n/exit\n", "chat", "--approve", "all")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, password) || !strings.Contains(r.stdout, "it is <redacted") {
		t.Fatalf("streamed reply:\n%s", r.stdout)
	}
	assertNotInHome(t, e.home, password)
}

// TestLaterDiscoveryIsNotReplayed: a value read bare first (notes.txt) and
// revealed as a password a step later (config.ini) is not sent back to the
// provider in the next request, neither in the earlier result nor the
// later one.
func TestLaterDiscoveryIsNotReplayed(t *testing.T) {
	const password = "Late-d1scovered-e2e-9090"
	var mu sync.Mutex
	var requests []string
	call := func(id, path string) string {
		args, _ := json.Marshal(map[string]any{"path": path})
		resp, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"role": "assistant", "content": "",
			"tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "read_file", "arguments": string(args)}}},
		}}}})
		return string(resp)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, string(body))
		n := len(requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch n {
		case 1:
			io.WriteString(w, call("call_1", "notes.txt"))
		case 2:
			io.WriteString(w, call("call_2", "config.ini"))
		default:
			io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"done"}}]}`)
		}
	}))
	defer srv.Close()
	e := newEnv(t)
	for name, body := range map[string]string{"notes.txt": "remember " + password + "\n", "config.ini": "password=" + password + "\n"} {
		if err := os.WriteFile(filepath.Join(e.workspace, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.extra = []string{"OPENAI_API_KEY=sk-test-provider-key-000", "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	out, r := e.runJSON("--provider", "openai", "--approve", "all", "read them")
	if r.code != 0 || out.Outcome != "completed" || len(out.ToolCalls) != 2 {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 3 {
		t.Fatalf("%d provider requests", len(requests))
	}
	if !strings.Contains(requests[1], password) {
		t.Fatal("the second request should still carry the bare value: nothing had revealed it yet")
	}
	if strings.Contains(requests[2], password) {
		t.Fatalf("the value was replayed after a call revealed it: %s", requests[2])
	}
}

// TestBareCredentialShapesAreRedacted: tokens with no field name or
// assignment around them (a file of bare lines, a command printing them)
// are recognised by shape and stored nowhere raw.
func TestBareCredentialShapesAreRedacted(t *testing.T) {
	tokens := []string{
		"sk-proj-" + strings.Repeat("Ab3x", 10) + "T3BlbkFJ" + strings.Repeat("Zq9w", 10),
		"sk-ant-api03-" + strings.Repeat("k2Lm-", 18) + "AbCdEAA",
		"ghp_" + "R7w2Yq9ZkP4mN8vB1xC6dF3gH5jL0sT2uV4w",
		"github_pat_" + "11ABCDEFG0" + "hijklmnopqrs" + "_" + strings.Repeat("Xy7Qz", 11) + "Wq3e",
		"AKIA" + "Q3ZT7XK2MB5NWPLR",
		"xoxb-" + "123456789012" + "-" + "1234567890123" + "-" + "AbCdEfGhIjKlMnOpQrStUvWx",
		"glpat-" + "Zx8Kq2Lm7Np4Rt6Vw9By",
		"AIza" + "SyB-9xQ2kL7mN4pR8tV1wZ3yC6dF0gH5jK2",
	}
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "tokens.txt"), []byte(strings.Join(tokens, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.scripted("all", `[{"name":"read_file","arguments":{"path":"tokens.txt"}},{"name":"terminal","arguments":{"command":"cat tokens.txt"}}]`)
	for i, c := range out.ToolCalls {
		if c.Status != "succeeded" || strings.Count(c.Content, "<redacted") < len(tokens) {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
	for _, tok := range tokens {
		assertNotInHome(t, e.home, tok)
	}
}
