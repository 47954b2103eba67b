package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestRunFakeProviderPlainText(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "hello", "there")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if got, want := r.stdout, "[fake] hello there\n"; got != want {
		t.Fatalf("stdout=%q, want %q", got, want)
	}
	for _, p := range []string{"config.yaml", "agents/assistant/agent.yaml", "agents/evolver/agent.yaml", "runtime/runtime.sqlite3"} {
		st, err := os.Stat(filepath.Join(e.home, p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	for _, d := range []string{"", "agents", "runtime"} {
		st, err := os.Stat(filepath.Join(e.home, d))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Errorf("dir %q mode %v, want 0700", d, st.Mode().Perm())
		}
	}
}

func TestRunJSONContractAndSessionContinuity(t *testing.T) {
	e := newEnv(t)
	first, r := e.runJSON("first message")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got, want := strings.Join(keys, ","), "core_id,core_revision,deliveries,error,outcome,session_id,tasks,text,tool_calls,turn_id,usage"; got != want {
		t.Fatalf("keys=%s, want %s", got, want)
	}
	if raw["error"] != nil {
		t.Fatalf("error=%v, want null", raw["error"])
	}
	if first.Outcome != "completed" || first.Text != "[fake] first message" || first.CoreID != "assistant" || first.CoreRevision == "" {
		t.Fatalf("got %+v", first)
	}
	if !strings.HasPrefix(first.SessionID, "session_") || !strings.HasPrefix(first.TurnID, "turn_") {
		t.Fatalf("ids %q %q", first.SessionID, first.TurnID)
	}
	if len(first.Deliveries) != 1 || first.Deliveries[0].Status != "sent" || first.Deliveries[0].Text != "[fake] first message" {
		t.Fatalf("deliveries=%+v", first.Deliveries)
	}

	second, _ := e.runJSON("second")
	if second.SessionID != first.SessionID {
		t.Fatalf("second run session %s, want the same %s", second.SessionID, first.SessionID)
	}
	fresh, _ := e.runJSON("--new", "third")
	if fresh.SessionID == first.SessionID {
		t.Fatal("--new reused the session")
	}
	// Without flags the CLI conversation now continues the fresh session.
	cont, _ := e.runJSON("fourth")
	if cont.SessionID != fresh.SessionID {
		t.Fatalf("after --new, run continued %s, want %s", cont.SessionID, fresh.SessionID)
	}
	back, _ := e.runJSON("--session", first.SessionID, "fifth")
	if back.SessionID != first.SessionID {
		t.Fatalf("--session resumed %s, want %s", back.SessionID, first.SessionID)
	}

	show := e.run("", "sessions", "show", first.SessionID, "--json")
	if show.code != 0 {
		t.Fatalf("sessions show: %d %s", show.code, show.stderr)
	}
	var s struct {
		SessionID string `json:"session_id"`
		Messages  []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &s); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range s.Messages {
		texts = append(texts, m.Role+":"+m.Text)
	}
	want := "user:first message,assistant:[fake] first message,user:second,assistant:[fake] second,user:fifth,assistant:[fake] fifth"
	if got := strings.Join(texts, ","); got != want {
		t.Fatalf("transcript=%s\nwant %s", got, want)
	}
	list := e.run("", "sessions", "list", "--json")
	var sessions []map[string]any
	if err := json.Unmarshal([]byte(list.stdout), &sessions); err != nil || len(sessions) != 2 {
		t.Fatalf("sessions list: %v %s", err, list.stdout)
	}
}

func TestRunToolCallsThroughScript(t *testing.T) {
	e := newEnv(t)
	script := e.writeFile("script.json", `{"responses":[
		{"content":"let me look","tool_calls":[{"id":"c1","name":"tools_list"},{"id":"c2","name":"no_such_tool","arguments":{"a":1}}]},
		{"content":"done"}]}`)
	out, r := e.runJSON("--fake-script", script, "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if out.Text != "done" || len(out.ToolCalls) != 2 {
		t.Fatalf("got %+v", out)
	}
	tl, nf := out.ToolCalls[0], out.ToolCalls[1]
	if tl.CallID != "c1" || tl.Name != "tools_list" || tl.Status != "succeeded" || tl.IsError || !tl.ExecutionStarted || !strings.Contains(tl.Content, `"clarify"`) {
		t.Fatalf("tools_list call %+v", tl)
	}
	if nf.Status != "not_found" || !nf.IsError || nf.ExecutionStarted || nf.Content != "tool not found or not allowed: no_such_tool" {
		t.Fatalf("unknown tool call %+v", nf)
	}
}

func TestRunFakeFallbackToolsList(t *testing.T) {
	e := newEnv(t)
	out, _ := e.runJSON("please run tools_list")
	if len(out.ToolCalls) != 1 || out.ToolCalls[0].Name != "tools_list" {
		t.Fatalf("tool calls %+v", out.ToolCalls)
	}
	if !strings.HasPrefix(out.Text, "[fake] tool result received: ") {
		t.Fatalf("text %q", out.Text)
	}
}

func TestRunClarifyNeedsUser(t *testing.T) {
	e := newEnv(t)
	script := e.writeFile("s.json", `[{"tool_calls":[{"name":"clarify","arguments":{"question":"Which file?","choices":["a.go","b.go"]}}]}]`)
	out, r := e.runJSON("--fake-script", script, "fix it")
	if r.code != 0 || out.Outcome != "needs_user" || out.Text != "Which file?" {
		t.Fatalf("exit %d, %+v", r.code, out)
	}
}

func TestRunStdinText(t *testing.T) {
	e := newEnv(t)
	r := e.run("from stdin\n", "run", "-")
	if r.code != 0 || r.stdout != "[fake] from stdin\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"run", "--new", "--session", "session_x", "hi"},
		{"run", "--approve", "maybe", "hi"},
		{"run", "--no-such-flag", "hi"},
		{"run"},
		{"run", "--session", "session_missing", "hi"},
	} {
		r := e.run("", args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
		if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); lines != 0 || r.stderr == "" {
			t.Errorf("%v: stderr must be one line, got %q", args, r.stderr)
		}
	}
}

func TestMalformedAgentYAMLIsExit2AndUntouched(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	p := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	bad := string(orig) + "\nbogus_key: 1\n"
	if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(strings.TrimRight(string(orig), "\n"), "\n") + 3
	r := e.run("", "run", "hi")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
	}
	msg := strings.TrimSpace(r.stderr)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "agent.yaml") || !strings.Contains(msg, "bogus_key") || !strings.Contains(msg, ":"+itoa(line)) {
		t.Fatalf("stderr %q should be one line naming agent.yaml, line %d and bogus_key", msg, line)
	}
	after, _ := os.ReadFile(p)
	if string(after) != bad {
		t.Fatal("agent.yaml changed on a failed load")
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestMissingAPIKeyNamesVariable(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "--provider", "openai", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "OPENAI_API_KEY") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	r = e.run("", "run", "--provider", "anthropic", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestInitIdempotentAndRefresh(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init", "--json"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	soul := filepath.Join(e.home, "agents", "assistant", "agent", "SOUL.md")
	if err := os.WriteFile(soul, []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("second init: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(soul); string(b) != "edited" {
		t.Fatal("init overwrote an edited file")
	}
	if r := e.run("", "init", "--refresh", "assistant", "--check"); r.code != 0 {
		t.Fatalf("refresh: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(soul); string(b) == "edited" {
		t.Fatal("--refresh assistant kept the edited file")
	}
}
