package cli_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/cli"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

type runJSON struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
	CoreID    string `json:"core_id"`
	Outcome   string `json:"outcome"`
	Text      string `json:"text"`
	Error     *struct {
		Code string `json:"code"`
	} `json:"error"`
	ToolCalls []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"tool_calls"`
}

func TestInit(t *testing.T) {
	h := newHome(t)
	var rep struct {
		Home            string   `json:"home"`
		ConfigCreated   bool     `json:"host_config_created"`
		CoresCreated    []string `json:"cores_created"`
		DatabaseCreated bool     `json:"database_created"`
	}
	h.decode(0, &rep, "init", "--json")
	if rep.Home != h.dir || !rep.ConfigCreated || !rep.DatabaseCreated || strings.Join(rep.CoresCreated, ",") != "assistant,evolver" {
		t.Fatalf("first init = %+v", rep)
	}
	if r := h.ok("init"); r.stdout != "initialized "+h.dir+"\n" {
		t.Fatalf("second init printed %q, want only the home", r.stdout)
	}
	r := h.ok("init", "--check", "--refresh", "assistant")
	for _, want := range []string{"refreshed assistant from the embedded templates\n", "core assistant@", "core evolver@"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("init --check --refresh lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestRunPlainJSONAndStdin(t *testing.T) {
	h := newHome(t)
	if r := h.ok("run", "hello", "there"); r.stdout != "[fake] hello there\n" || r.stderr != "" {
		t.Fatalf("run: stdout %q stderr %q", r.stdout, r.stderr)
	}
	var out runJSON
	h.decode(0, &out, "run", "--json", "again")
	if out.Outcome != "completed" || out.Text != "[fake] again" || out.CoreID != "assistant" || out.Error != nil {
		t.Fatalf("run --json = %+v", out)
	}
	// Without --new the CLI conversation's session continues; --new starts
	// another, --session resumes one.
	var next, fresh, resumed runJSON
	h.decode(0, &next, "run", "--json", "continued")
	h.decode(0, &fresh, "run", "--json", "--new", "fresh")
	h.decode(0, &resumed, "run", "--json", "--session", out.SessionID, "resumed")
	if next.SessionID != out.SessionID || fresh.SessionID == out.SessionID || resumed.SessionID != out.SessionID {
		t.Fatalf("sessions: first %s, continued %s, --new %s, --session %s", out.SessionID, next.SessionID, fresh.SessionID, resumed.SessionID)
	}
	if r := h.run("from stdin\n", "run", "-"); r.code != 0 || r.stdout != "[fake] from stdin\n" {
		t.Fatalf("run -: exit %d stdout %q", r.code, r.stdout)
	}
}

// A turn that ran and failed exits 1: plain output names the turn in one
// line, --json reports the outcome on stdout and nothing on stderr.
func TestRunFailedTurnExits1(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-cli-test-0000")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	h := newHome(t)
	wantOneLine(t, h.run("", "run", "--provider", "openai", "hi"), 1, "turn ", " failed: ")
	var out runJSON
	r := h.decode(1, &out, "run", "--provider", "openai", "--json", "hi")
	if out.Outcome != "failed" || out.Error == nil || r.stderr != "" {
		t.Fatalf("run --json: %+v, stderr %q", out, r.stderr)
	}
}

// --approve decides the calls that need approval: deny refuses them, all
// allows each once, ask reads the answer from stdin.
func TestRunApprove(t *testing.T) {
	h := newHome(t)
	script := func(name string) string {
		return demiurgetest.Script(t, demiurgetest.Call("write_file", map[string]any{"path": name + ".txt", "content": "x"}), demiurgetest.Reply("done"))
	}
	for _, tc := range []struct {
		mode, stdin, status string
	}{
		{"deny", "", "denied"},
		{"all", "", "succeeded"},
		{"ask", "y\n", "succeeded"},
		{"ask", "n\n", "denied"},
		{"ask", "", "denied"}, // the end of the input is a denial
	} {
		name := tc.mode + "-" + strings.TrimSpace(tc.stdin)
		r := h.run(tc.stdin, "run", "--json", "--new", "--approve", tc.mode, "--fake-script", script(name), "write")
		if r.code != 0 || !strings.Contains(r.stdout, `"status":"`+tc.status+`"`) {
			t.Errorf("--approve %s with %q: exit %d stdout %s stderr %s", tc.mode, tc.stdin, r.code, r.stdout, r.stderr)
			continue
		}
		_, err := os.Stat(filepath.Join(h.workspace, name+".txt"))
		if written := err == nil; written != (tc.status == "succeeded") {
			t.Errorf("--approve %s with %q: file written %v, call %s", tc.mode, tc.stdin, written, tc.status)
		}
		if asked := strings.Contains(r.stderr, "Approval needed: write_file"); asked != (tc.mode == "ask") {
			t.Errorf("--approve %s: asked %v:\n%s", tc.mode, asked, r.stderr)
		}
	}
}

// Each invocation is a process of its own: a fake script starts afresh in
// every Run, and nothing of one Run's flags or Host is left for the next.
func TestRunTwiceInOneProcess(t *testing.T) {
	h := newHome(t)
	script := demiurgetest.Script(t, demiurgetest.Reply("scripted"))
	for range 2 {
		if r := h.ok("run", "--fake-script", script, "hi"); r.stdout != "scripted\n" {
			t.Fatalf("run with the script: %q, want its answer every time", r.stdout)
		}
	}
	if r := h.ok("run", "hi"); r.stdout != "[fake] hi\n" {
		t.Fatalf("run without the script: %q", r.stdout)
	}
}

// The home comes from --home, else DEMIURGE_HOME; nil arguments are the
// bare command (chat), never the test binary's own arguments.
func TestHomeFromEnvironmentAndNilArgs(t *testing.T) {
	h := newHome(t)
	t.Setenv("DEMIURGE_HOME", h.dir)
	var out, errb demiurgetest.Buffer
	if code := cli.Run(context.Background(), []string{"run", "hi"}, strings.NewReader(""), &out, &errb); code != 0 || out.String() != "[fake] hi\n" {
		t.Fatalf("run with DEMIURGE_HOME: exit %d %q %q", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(h.dir, "runtime", "runtime.sqlite3")); err != nil {
		t.Fatalf("DEMIURGE_HOME was not used: %v", err)
	}
	var chatOut, chatErr demiurgetest.Buffer
	if code := cli.Run(context.Background(), nil, strings.NewReader("hello\n"), &chatOut, &chatErr); code != 0 || chatOut.String() != "[fake] hello\n" {
		t.Fatalf("bare demiurge: exit %d stdout %q stderr %q", code, chatOut.String(), chatErr.String())
	}
}
