//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the directory src to dst, as an operator copies a core
// folder into a runtime home.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A core written for the original (testdata/original_core/classic:
// agent.yaml of the original's shape, module.py bootstrap, input and
// output slots and an authored tool, agent/lib shared through relative
// imports, demiurge.sdk; ctx.bootstrap.add, ctx.input.add_context,
// ctx.input.progress, ctx.state.session, ctx.output.send_text,
// ctx.output.notice, ctx.agents.spawn) runs unchanged once copied into a
// runtime home and saved by the operator (its grants confirmed, as every
// hand edit that grants is): its tool answers, its session state carries
// across Host processes, and the child it spawns runs as a task.
func TestOriginalStyleCoreRunsUnchanged(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is required")
	}
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	copyTree(t, filepath.Join("testdata", "original_core", "classic"), filepath.Join(e.home, "agents", "classic"))

	var refusal struct {
		ConfirmToken string `json:"confirm_token"`
	}
	e.coreJSON(&refusal, "save")
	if refusal.ConfirmToken == "" {
		t.Fatal("saving a core that grants capabilities asked for no confirmation")
	}
	if r := e.coreJSON(nil, "save", "--confirm", refusal.ConfirmToken); r.code != 0 {
		t.Fatalf("core save --confirm: %d %s", r.code, r.stderr)
	}

	script := e.writeFile("classic-1.json", `[{"tool_calls":[{"id":"c1","name":"echo","arguments":{"text":"hello"}}]},{"content":"first answer"}]`)
	out, r := e.runJSON("--core", "classic", "--new", "--fake-script", script, "--wait-tasks", "hi there")
	if r.code != 0 || out.Outcome != "completed" || out.Text != "first answer" {
		t.Fatalf("first turn: exit %d %+v %s", r.code, out, r.stderr)
	}
	if len(out.ToolCalls) != 1 || out.ToolCalls[0].Name != "echo" || out.ToolCalls[0].Status != "succeeded" || out.ToolCalls[0].Content != "HELLO!" {
		t.Errorf("tool calls %+v", out.ToolCalls)
	}
	var texts []string
	for _, d := range out.Deliveries {
		texts = append(texts, d.Text)
	}
	got := strings.Join(texts, "|")
	for _, want := range []string{"visit 1: hi there", "first answer", "followup running on evolver: task_"} {
		if !strings.Contains(got, want) {
			t.Errorf("deliveries %q lack %q", got, want)
		}
	}
	if len(out.Tasks) != 1 || out.Tasks[0]["kind"] != "agent.spawn" || out.Tasks[0]["status"] != "succeeded" {
		t.Errorf("tasks %+v", out.Tasks)
	}

	// The next Host process continues the session and its state.
	script = e.writeFile("classic-2.json", `[{"content":"second answer"}]`)
	out, r = e.runJSON("--core", "classic", "--session", out.SessionID, "--fake-script", script, "--wait-tasks", "again")
	if r.code != 0 || out.Outcome != "completed" || out.Text != "second answer" {
		t.Fatalf("second turn: exit %d %+v %s", r.code, out, r.stderr)
	}
	texts = texts[:0]
	for _, d := range out.Deliveries {
		texts = append(texts, d.Text)
	}
	if got := strings.Join(texts, "|"); !strings.Contains(got, "visit 2: hi there, again") {
		t.Errorf("second turn's deliveries %q", got)
	}
}
