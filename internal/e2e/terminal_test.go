package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestTerminalUnderDenyAndAll(t *testing.T) {
	e := newEnv(t)
	cmd := "touch marker.txt && echo made-it"
	denied := e.scripted("deny", terminalCalls(cmd))
	if c := denied.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted {
		t.Fatalf("terminal under deny: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "marker.txt")); !os.IsNotExist(err) {
		t.Fatal("a denied command ran")
	}
	out := e.scripted("all", terminalCalls(cmd))
	if c := out.ToolCalls[0]; c.Status != "succeeded" || !strings.Contains(c.Content, "made-it") {
		t.Fatalf("terminal under all: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "marker.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}
}

func TestTerminalBlockedAndCredentialFree(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"OPENAI_API_KEY=sk-e2e-must-not-leak-123456", "AWS_SECRET_ACCESS_KEY=aws-e2e-must-not-leak"}
	out := e.scripted("all", `[{"name":"terminal","arguments":{"command":"rm -rf /"}},{"name":"terminal","arguments":{"command":"env"}}]`)
	if c := out.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted || !strings.Contains(c.Content, "blocked") {
		t.Fatalf("rm -rf / : %+v", c)
	}
	env := out.ToolCalls[1]
	if env.Status != "succeeded" {
		t.Fatalf("env: %+v", env)
	}
	for _, leak := range []string{"sk-e2e-must-not-leak", "aws-e2e-must-not-leak", "OPENAI_API_KEY", "AWS_SECRET"} {
		if strings.Contains(env.Content, leak) {
			t.Fatalf("command environment leaks %s:\n%s", leak, env.Content)
		}
	}
	if !strings.Contains(env.Content, "HOME="+e.home) {
		t.Fatalf("HOME is not the private runtime folder:\n%s", env.Content)
	}
}

func TestWebExtractPolicyAndApproval(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head><title>Plan</title><script>evil()</script></head><body><p>Ship on Friday.</p></body></html>")
	}))
	defer srv.Close()
	call := fmt.Sprintf(`[{"name":"web_extract","arguments":{"url":%q}}]`, srv.URL+"/plan")

	// The default policy refuses loopback before any approval or request.
	e := newEnv(t)
	out := e.scripted("all", call)
	if c := out.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted || hits.Load() != 0 {
		t.Fatalf("loopback under the default policy: %+v (hits %d)", c, hits.Load())
	}
	// An operator may admit loopback; approval still decides.
	e.extra = []string{"DEMIURGE_URL_ALLOW_LOOPBACK=1"}
	out = e.scripted("deny", call)
	if c := out.ToolCalls[0]; c.Status != "denied" || hits.Load() != 0 {
		t.Fatalf("web_extract under deny: %+v (hits %d)", c, hits.Load())
	}
	out = e.scripted("all", call)
	if c := out.ToolCalls[0]; c.Status != "succeeded" || !strings.Contains(c.Content, "Ship on Friday.") || strings.Contains(c.Content, "evil()") {
		t.Fatalf("web_extract under all: %+v", c)
	}
	if hits.Load() != 1 {
		t.Fatalf("server hit %d times", hits.Load())
	}
}
