package corerepo

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/coretree"
)

func TestSaveStatusDiscard(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	mustClean(t, r)
	base := mustLive(t, r)

	st, err := r.Status()
	if err != nil || !st.Clean || st.Revision != base {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "Be brief.\n")
	st, err = r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Clean || len(st.Changes) != 1 || st.Changes[0] != (coretree.Change{Path: "assistant/agent/SOUL.md", Kind: coretree.Modified}) {
		t.Fatalf("Status = %+v", st)
	}
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Saved || res.Previous != base || res.Summary != "save assistant authored prompt edits" {
		t.Fatalf("Save = %+v", res)
	}
	if got := mustLive(t, r); got != res.Revision {
		t.Fatalf("live = %s, want %s", got, res.Revision)
	}
	if prev, _ := r.Previous(); prev != base {
		t.Fatalf("previous = %s, want %s", prev, base)
	}
	mustClean(t, r)
	wantMsg := "save assistant authored prompt edits\n\nSource: external edit of runtime agents tree\nChanged scopes:\n- assistant\nChanged paths:\n- assistant/agent/SOUL.md\nGates: passed\n"
	if res.Message != wantMsg {
		t.Fatalf("message =\n%s\nwant\n%s", res.Message, wantMsg)
	}
	if st, _ := r.Status(); !st.Clean {
		t.Fatalf("Status after save = %+v", st)
	}
	vs, err := r.Versions(10)
	if err != nil || len(vs) != 2 || !vs[0].Live || !vs[1].Previous || vs[1].Summary != "core init" {
		t.Fatalf("Versions = %+v, %v", vs, err)
	}

	// Discard: an edit, a new file in a new directory, a deletion.
	before := readFile(t, p.Agents, "assistant/agent.yaml")
	editFile(t, p.Agents, "assistant/agent.yaml", "General coding assistant core.", "Changed.")
	writeFile(t, p.Agents, "assistant/agent/notes/new.md", "x")
	removeFile(t, p.Agents, "evolver/agent/SOUL.md")
	undone, err := r.Discard(ctx)
	if err != nil || len(undone) != 3 {
		t.Fatalf("Discard = %+v, %v", undone, err)
	}
	if got := readFile(t, p.Agents, "assistant/agent.yaml"); got != before {
		t.Fatalf("agent.yaml not restored")
	}
	if exists(p.Agents, "assistant/agent/notes") {
		t.Fatalf("added directory not removed")
	}
	if !exists(p.Agents, "evolver/agent/SOUL.md") {
		t.Fatalf("deleted file not restored")
	}
	if st, _ := r.Status(); !st.Clean {
		t.Fatalf("Status after discard = %+v", st)
	}
	if got := mustLive(t, r); got != res.Revision {
		t.Fatalf("discard moved live")
	}
}

func TestSaveSummaries(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		edit    func(t *testing.T, agents string)
		summary string
		detect  string
	}{
		{"model", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "model_name: null", "model_name: gpt-x")
		}, "update assistant model config", "- assistant/agent.yaml: model.model_name changed\n"},
		{"config", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "max_model_steps: 90", "max_model_steps: 40")
		}, "update assistant config", "- assistant/agent.yaml: runtime.max_model_steps changed\n"},
		{"global", func(t *testing.T, a string) {
			editFile(t, a, "agent.yaml", "tool_display: summary", "tool_display: full")
		}, "update global fallback config", "- agent.yaml: ui.tool_display changed\n"},
		{"skill", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/skills/new.md", "---\nname: newskill\ndescription: d\n---\nbody\n")
		}, "save assistant skill edits", ""},
		{"tool", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent/tools/echo/module.star", "def", "# c\ndef")
		}, "save assistant tool edits", ""},
		{"two scopes", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent/SOUL.md", "", "x\n")
			editFile(t, a, "evolver/agent/SOUL.md", "", "x\n")
		}, "save local agent edits", ""},
		{"mixed", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent/SOUL.md", "", "x\n")
			editFile(t, a, "assistant/agent/tools/echo/module.star", "def", "# c\ndef")
		}, "save assistant agent edits", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := newHome(t)
			tc.edit(t, p.Agents)
			res, err := r.Save(ctx, SaveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary != tc.summary {
				t.Fatalf("summary = %q, want %q", res.Summary, tc.summary)
			}
			if tc.detect != "" && !strings.Contains(res.Message, "Detected changes:\n"+tc.detect) {
				t.Fatalf("message lacks %q:\n%s", tc.detect, res.Message)
			}
		})
	}
}

func TestDiffRedactsSecrets(t *testing.T) {
	p, r := newHome(t)
	writeFile(t, p.Agents, "assistant/agent/mcp/gh.yaml", "transport: streamable_http\nurl: https://api.example.com/mcp\nheaders:\n  Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "Use https://bob:hunter2hunter2@example.com/x when asked.\n")
	d, err := r.Diff()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 2 || d.Revision != mustLive(t, r) {
		t.Fatalf("Diff = %+v", d)
	}
	for _, secret := range []string{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "hunter2hunter2"} {
		if strings.Contains(d.Diff, secret) {
			t.Fatalf("diff leaks %q:\n%s", secret, d.Diff)
		}
	}
	for _, want := range []string{"+++ b/assistant/agent/mcp/gh.yaml", "+transport: streamable_http", "--- /dev/null", "<redacted:"} {
		if !strings.Contains(d.Diff, want) {
			t.Fatalf("diff lacks %q:\n%s", want, d.Diff)
		}
	}
}
