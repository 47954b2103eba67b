package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// toolCall is one fake response calling name with args.
func toolCall(name string, args map[string]any) map[string]any {
	return map[string]any{"tool_calls": []map[string]any{{"name": name, "arguments": args}}}
}

// The model-facing path: evolve_core start (the evolver's edits run inside
// the same process, from the same fake script), review and promote in later
// turns, then rollback_core. Every action asks for approval: under deny
// nothing happens.
func TestEvolveCoreAndRollbackCoreTools(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before := coreRead(t, e.soulPath())

	denied := e.scripted("deny", `[{"name":"evolve_core","arguments":{"action":"start","goal":"sharpen the soul"}}]`)
	if c := denied.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted {
		t.Fatalf("evolve_core under deny: %+v", c)
	}

	// Turn 1: start. The parent's first response calls the tool; the
	// evolver's turn consumes the next two; the parent's last one ends.
	script := e.evolverScript("start.json",
		toolCall("evolve_core", map[string]any{"action": "start", "goal": "sharpen the soul"}),
		evolverWrite("assistant/agent/SOUL.md", "You are a sharper assistant.\n"),
		evolverReply("rewrote SOUL.md"),
		evolverReply("started"))
	start, r := e.runJSON("--approve", "all", "--fake-script", script, "evolve yourself")
	if r.code != 0 || start.ToolCalls[0].Status != "succeeded" {
		t.Fatalf("start: exit %d %+v %s", r.code, start.ToolCalls, r.stderr)
	}
	var started struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(start.ToolCalls[0].Content), &started); err != nil || started.RunID == "" {
		t.Fatalf("start result %q: %v", start.ToolCalls[0].Content, err)
	}
	if got := coreRead(t, e.soulPath()); got != before {
		t.Fatal("an evolve start changed the live core")
	}

	// Turn 2: review, then promote.
	script = e.evolverScript("promote.json",
		toolCall("evolve_core", map[string]any{"action": "review", "run_id": started.RunID}),
		toolCall("evolve_core", map[string]any{"action": "promote", "run_id": started.RunID, "reason": "approved"}),
		evolverReply("promoted"))
	promoted, r := e.runJSON("--approve", "all", "--fake-script", script, "promote it")
	if r.code != 0 || len(promoted.ToolCalls) != 2 {
		t.Fatalf("promote turn: exit %d %+v %s", r.code, promoted.ToolCalls, r.stderr)
	}
	review, promote := promoted.ToolCalls[0], promoted.ToolCalls[1]
	if review.Status != "succeeded" || !strings.Contains(review.Content, `"passed":true`) || strings.Contains(review.Content, "mcp-review:") {
		t.Fatalf("review: %+v", review)
	}
	if promote.Status != "succeeded" || !strings.Contains(promote.Content, `"promoted":true`) {
		t.Fatalf("promote: %+v", promote)
	}
	if got := coreRead(t, e.soulPath()); got != "You are a sharper assistant.\n" {
		t.Fatalf("live SOUL.md after promote: %q", got)
	}

	// The next turn runs the new revision; rollback_core restores the old
	// tree as a new revision, effective at the turn after.
	script = e.evolverScript("rollback.json", toolCall("rollback_core", map[string]any{"reason": "undo"}), evolverReply("rolled back"))
	rolled, r := e.runJSON("--approve", "all", "--fake-script", script, "undo it")
	if r.code != 0 || rolled.CoreRevision == start.CoreRevision {
		t.Fatalf("rollback turn: exit %d, revision %s (start %s)", r.code, rolled.CoreRevision, start.CoreRevision)
	}
	if c := rolled.ToolCalls[0]; c.Status != "succeeded" || !strings.HasPrefix(c.Content, "rollback committed: ") || !strings.HasSuffix(c.Content, "(takes effect next turn)") {
		t.Fatalf("rollback_core: %+v", c)
	}
	if got := coreRead(t, e.soulPath()); got != before {
		t.Fatalf("live SOUL.md after rollback: %q", got)
	}
	after, r := e.runJSON("hello again")
	if r.code != 0 || after.CoreRevision == rolled.CoreRevision {
		t.Fatalf("turn after rollback: exit %d, revision %s", r.code, after.CoreRevision)
	}
}
