//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Python slot's ctx.tools.call of a tool that needs approval, through
// the binary: `--approve deny` refuses it (the slot gets the denial as a
// result and the turn goes on), `--approve all` lets it run.
func TestPythonToolsCallUnderApproveFlags(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is required")
	}
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	core := filepath.Join(e.home, "agents", "assistant")
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(core, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(core, "agent/input/base_input/module.star")); err != nil {
		t.Fatal(err)
	}
	write("agent/input/base_input/slot.yaml", "failure_policy: hard\ncapabilities: ['tool.call:echo']\n")
	write("agent/input/base_input/module.py", `
async def process(ctx):
    ctx.input.add_context(ctx.input.raw_text, role="user")
    r = await ctx.tools.call("echo", {"text": "from python"})
    ctx.input.progress("echo %s: %s" % ("failed" if r.is_error else "ran", r.content))
`)
	b, err := os.ReadFile(filepath.Join(core, "agent/tools/echo/tool.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write("agent/tools/echo/tool.yaml", strings.Replace(string(b), "approval_policy: auto", "approval_policy: prompt", 1))
	var refusal struct {
		ConfirmToken string `json:"confirm_token"`
	}
	e.coreJSON(&refusal, "save")
	if refusal.ConfirmToken == "" {
		t.Fatal("no confirmation asked for the grant")
	}
	if r := e.coreJSON(nil, "save", "--confirm", refusal.ConfirmToken); r.code != 0 {
		t.Fatalf("core save --confirm: %d %s", r.code, r.stderr)
	}

	for _, c := range []struct{ approve, want string }{
		{"deny", "echo failed: approval denied: Call authored tool echo"},
		{"all", "echo ran: from python"},
	} {
		out, r := e.runJSON("--new", "--approve", c.approve, "hi")
		if r.code != 0 || out.Outcome != "completed" {
			t.Fatalf("--approve %s: exit %d %+v %s", c.approve, r.code, out, r.stderr)
		}
		var texts []string
		for _, d := range out.Deliveries {
			texts = append(texts, d.Text)
		}
		if got := strings.Join(texts, "|"); !strings.Contains(got, c.want) {
			t.Errorf("--approve %s: deliveries %q, want %q", c.approve, got, c.want)
		}
	}
}
