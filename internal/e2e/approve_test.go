package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeCall(name string) string {
	return `{"tool_calls":[{"name":"write_file","arguments":{"path":"` + name + `","content":"x"}}]}`
}

// TestApproveAskSessionGrant answers the chat's terminal prompt with "allow
// for this session": the same write in a later turn of the session is not
// asked again.
func TestApproveAskSessionGrant(t *testing.T) {
	e := newEnv(t)
	script := e.writeFile("s.json", "["+writeCall("a.txt")+`,{"content":"one"},`+writeCall("a.txt")+`,{"content":"two"}]`)
	r := e.run("first\n2\nsecond\n/exit\n", "chat", "--approve", "ask", "--fake-script", script)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "Approval needed"); n != 1 {
		t.Fatalf("asked %d times, want once:\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stdout, "one") || !strings.Contains(r.stdout, "two") {
		t.Fatalf("stdout %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "a.txt")); err != nil {
		t.Fatal("the approved write did not happen")
	}
}

func TestApproveAskDenyAnswer(t *testing.T) {
	e := newEnv(t)
	script := e.writeFile("s.json", "["+writeCall("b.txt")+`,{"content":"done"}]`)
	out, r := e.runJSONStdin("3\n", "--approve", "ask", "--fake-script", script, "write")
	if r.code != 0 || len(out.ToolCalls) != 1 || out.ToolCalls[0].Status != "denied" {
		t.Fatalf("exit %d %+v", r.code, out)
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "b.txt")); !os.IsNotExist(err) {
		t.Fatal("a denied write happened")
	}
}
