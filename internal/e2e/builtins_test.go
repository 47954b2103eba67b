package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scripted runs one turn whose model makes the given calls (a JSON list of
// tool_calls) and then answers "done".
func (e *env) scripted(approve, calls string) runOut {
	e.t.Helper()
	script := e.writeFile("script-"+strings.ReplaceAll(e.t.Name(), "/", "_")+".json", `[{"tool_calls":`+calls+`},{"content":"done"}]`)
	out, r := e.runJSON("--approve", approve, "--fake-script", script, "go")
	if r.code != 0 {
		e.t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return out
}

func TestBuiltinPatchAndSearch(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "main.go"), []byte("package main\n\nfunc hello() string { return \"hi\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	denied := e.scripted("deny", `[{"name":"patch","arguments":{"path":"main.go","old":"\"hi\"","new":"\"hello\""}}]`)
	if c := denied.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted {
		t.Fatalf("patch under deny: %+v", c)
	}
	out := e.scripted("all", `[{"name":"patch","arguments":{"path":"main.go","old":"\"hi\"","new":"\"hello\""}},
		{"name":"search_files","arguments":{"query":"hello"}}]`)
	if c := out.ToolCalls[0]; c.Status != "succeeded" {
		t.Fatalf("patch: %+v", c)
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "main.go")); !strings.Contains(string(b), `"hello"`) {
		t.Fatalf("patched file: %s", b)
	}
	if c := out.ToolCalls[1]; c.Status != "succeeded" || !strings.Contains(c.Content, "main.go") {
		t.Fatalf("search_files: %+v", c)
	}
}

func TestBuiltinTodo(t *testing.T) {
	e := newEnv(t)
	out := e.scripted("deny", `[{"name":"todo","arguments":{"action":"add","text":"write tests"}},
		{"name":"todo","arguments":{"action":"complete","index":1}},
		{"name":"todo","arguments":{"action":"list"}},
		{"name":"todo","arguments":{"action":"complete","index":7}}]`)
	if c := out.ToolCalls[2]; c.Status != "succeeded" || !strings.Contains(c.Content, "[x] write tests") {
		t.Fatalf("todo list: %+v", c)
	}
	if c := out.ToolCalls[3]; !c.IsError || !strings.Contains(c.Content, "todo index out of range: 7") {
		t.Fatalf("todo out of range: %+v", c)
	}
}

func TestBuiltinSkills(t *testing.T) {
	e := newEnv(t)
	out := e.scripted("deny", `[{"name":"skills_list","arguments":{}},{"name":"skill_view","arguments":{"name":"debugging"}},
		{"name":"skill_manage","arguments":{"action":"create","name":"notes","content":"---\nname: notes\ndescription: Take notes.\n---\nWrite things down.\n"}}]`)
	if c := out.ToolCalls[0]; c.Status != "succeeded" || !strings.Contains(c.Content, "debugging") {
		t.Fatalf("skills_list: %+v", c)
	}
	if c := out.ToolCalls[1]; c.Status != "succeeded" || len(c.Content) < 20 {
		t.Fatalf("skill_view: %+v", c)
	}
	if c := out.ToolCalls[2]; c.Status != "denied" {
		t.Fatalf("skill_manage under deny: %+v", c)
	}
	out = e.scripted("all", `[{"name":"skill_manage","arguments":{"action":"create","name":"notes","content":"---\nname: notes\ndescription: Take notes.\n---\nWrite things down.\n"}},
		{"name":"skill_manage","arguments":{"action":"create","name":"broken","content":"---\nname: debugging\ndescription: duplicate name\n---\nx\n"}}]`)
	if c := out.ToolCalls[0]; c.Status != "succeeded" {
		t.Fatalf("skill_manage create: %+v", c)
	}
	if c := out.ToolCalls[1]; !c.IsError {
		t.Fatalf("a skill that breaks the core must be refused: %+v", c)
	}
	skills := filepath.Join(e.home, "agents", "assistant", "agent", "skills")
	if _, err := os.Stat(filepath.Join(skills, "broken")); !os.IsNotExist(err) {
		t.Fatal("the refused skill was left behind")
	}
	// The core still loads and the new skill is listed.
	if r := e.run("", "tools", "list"); r.code != 0 {
		t.Fatalf("core no longer loads: %s", r.stderr)
	}
}

func TestBuiltinSessionSearch(t *testing.T) {
	e := newEnv(t)
	if _, r := e.runJSON("remember the word pineapple"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	denied := e.scripted("deny", `[{"name":"session_search","arguments":{"query":"pineapple"}}]`)
	if c := denied.ToolCalls[0]; c.Status != "denied" {
		t.Fatalf("session_search under deny: %+v", c)
	}
	out := e.scripted("all", `[{"name":"session_search","arguments":{"query":"pineapple"}},
		{"name":"session_search","arguments":{"session_id":"session_does_not_exist"}}]`)
	if c := out.ToolCalls[0]; c.Status != "succeeded" || !strings.Contains(c.Content, "pineapple") {
		t.Fatalf("session_search: %+v", c)
	}
	if c := out.ToolCalls[1]; !c.IsError || !strings.Contains(c.Content, "not found") {
		t.Fatalf("unknown session: %+v", c)
	}
}
