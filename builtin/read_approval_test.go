package builtin_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/effect"
)

// dispatcher runs builtin calls through the real effect runtime with an
// approval runtime, answering questions with the approver (a
// recordingApprover, from web_extract_test.go).
type dispatcher struct {
	e   *env
	cat *effect.Catalog
	rt  *effect.Runtime
}

func newDispatcher(e *env) *dispatcher {
	e.t.Helper()
	cat, err := effect.NewCatalog(e.tc.CoreID, e.tc.CoreRevision, builtin.Definitions(allToolsets, e.deps))
	if err != nil {
		e.t.Fatal(err)
	}
	return &dispatcher{e: e, cat: cat, rt: effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})}
}

func (d *dispatcher) call(a effect.Approver, name string, args map[string]any) demiurge.EffectResult {
	d.e.t.Helper()
	req, ok := d.cat.Bind(demiurge.ToolCall{ID: "c1", Name: name, Arguments: jsonArgs(d.e.t, args)}, demiurge.OriginModel)
	if !ok {
		d.e.t.Fatalf("%s not bound", name)
	}
	tc := d.e.tc
	tc.Approver = a
	return d.rt.Execute(context.Background(), d.cat, req, tc)
}

func readApprovalEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t)
	base := filepath.Dir(e.ws)
	userHome := mkdir(t, filepath.Join(base, "user"))
	t.Setenv("HOME", userHome)
	writeFiles(t, userHome, map[string]string{"note.txt": "home note\n", "other.txt": "other\n"})
	writeFiles(t, base, map[string]string{"outside/.ssh/id_rsa": "KEY", "outside/o.txt": "needle outside\n"})
	e.write("a.txt", "needle\n")
	e.write(".env", "needle=1\n")
	e.write("clean/c.txt", "needle\n")
	return e, base
}

// TestReadApprovals: reads inside the workspace of paths that are not
// sensitive run at once; reads outside it, of sensitive paths, or over
// sensitive files ask the operator at risk high with the path and the
// reason in the question, and run only when allowed; paths private to the
// Host and bad arguments are refused without a question.
func TestReadApprovals(t *testing.T) {
	e, base := readApprovalEnv(t)
	abs := func(p string) string { return filepath.ToSlash(filepath.Join(base, p)) }
	d := newDispatcher(e)
	for _, tt := range []struct {
		name    string
		tool    string
		args    map[string]any
		summary string // "" : no question
		target  string
		content string // the allowed call's content ("" : not checked)
		refusal string // a refusal before any question
	}{
		{name: "inside", tool: "read_file", args: map[string]any{"path": "a.txt"}, content: "needle\n"},
		{name: "home", tool: "read_file", args: map[string]any{"path": "~/note.txt"},
			summary: "Read file " + abs("user/note.txt") + " (outside the workspace)", target: abs("user/note.txt"), content: "home note\n"},
		{name: "sensitive", tool: "read_file", args: map[string]any{"path": ".env"},
			summary: "Read file .env (sensitive path)", target: ".env", content: "needle=1\n"},
		{name: "outside and sensitive", tool: "read_file", args: map[string]any{"path": "../outside/.ssh/id_rsa"},
			summary: "Read file " + abs("outside/.ssh/id_rsa") + " (outside the workspace, sensitive path)", target: abs("outside/.ssh/id_rsa"), content: "KEY"},
		{name: "search outside", tool: "search_files", args: map[string]any{"query": "needle outside", "path": "../outside"},
			summary: "Search files under " + abs("outside") + " (outside the workspace)", target: abs("outside"),
			content: abs("outside/o.txt") + ":1: needle outside"},
		{name: "search sensitive files", tool: "search_files", args: map[string]any{"query": "needle=", "include_sensitive": true},
			summary: "Search files under . (including sensitive files)", target: ".", content: ".env:1: needle=1"},
		{name: "search without sensitive files", tool: "search_files", args: map[string]any{"query": "needle", "path": "clean", "include_sensitive": true},
			content: "clean/c.txt:1: needle"},
		{name: "search skips sensitive", tool: "search_files", args: map[string]any{"query": "needle="}, content: "(no matches)"},
		{name: "host private", tool: "read_file", args: map[string]any{"path": "../home/agents/demo/agent.yaml"},
			refusal: "path is private to the Host: ../home/agents/demo/agent.yaml"},
		{name: "host private search", tool: "search_files", args: map[string]any{"query": "x", "path": "../home"},
			refusal: "path is private to the Host: ../home"},
		{name: "bad target before the question", tool: "search_files", args: map[string]any{"query": "x", "path": "..", "target": "lines"},
			refusal: "unsupported search target: lines"},
		{name: "no query before the question", tool: "search_files", args: map[string]any{"path": ".."},
			refusal: "query is required for content search"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, decision := range []string{effect.DecisionAllowOnce, effect.DecisionDeny} {
				a := &recordingApprover{decision: decision}
				res := d.call(a, tt.tool, tt.args)
				asked := a.requests()
				if tt.refusal != "" {
					if len(asked) != 0 || res.ModelView != tt.refusal || res.ExecutionStarted {
						t.Fatalf("%s: asked %d, %s %q, want refusal %q without a question", decision, len(asked), res.Status, res.ModelView, tt.refusal)
					}
					continue
				}
				if tt.summary == "" {
					if len(asked) != 0 || res.Status != demiurge.EffectSucceeded || res.ModelView != tt.content {
						t.Fatalf("%s: asked %d, %s %q, want %q without a question", decision, len(asked), res.Status, res.ModelView, tt.content)
					}
					continue
				}
				if len(asked) != 1 {
					t.Fatalf("%s: asked %d times, want once", decision, len(asked))
				}
				q := asked[0]
				if q.Risk != "high" || q.Summary != tt.summary || q.Target != tt.target || q.Capability != "fs.read" ||
					q.Action != map[string]string{"read_file": "read", "search_files": "search"}[tt.tool] || len(q.Notes) == 0 {
					t.Fatalf("question %+v, want risk high, summary %q, target %q", q, tt.summary, tt.target)
				}
				switch decision {
				case effect.DecisionAllowOnce:
					if res.Status != demiurge.EffectSucceeded || res.ModelView != tt.content {
						t.Fatalf("allowed: %s %q, want %q", res.Status, res.ModelView, tt.content)
					}
				default:
					if res.Status != demiurge.EffectDenied || res.ModelView != "approval denied: "+tt.summary || res.ExecutionStarted {
						t.Fatalf("denied: %s %q", res.Status, res.ModelView)
					}
				}
			}
		})
	}
}

// TestSearchSensitiveProbeFailsClosed: an include_sensitive search of a
// tree larger than the probe looks at is asked about, unseen.
func TestSearchSensitiveProbeFailsClosed(t *testing.T) {
	e, _ := readApprovalEnv(t)
	files := map[string]string{}
	for i := range 501 {
		files[fmt.Sprintf("big/f%03d.txt", i)] = "x\n"
	}
	writeFiles(t, e.ws, files)
	a := &recordingApprover{decision: effect.DecisionDeny}
	res := newDispatcher(e).call(a, "search_files", map[string]any{"query": "x", "path": "big", "include_sensitive": true})
	if asked := a.requests(); len(asked) != 1 || asked[0].Summary != "Search files under big (including sensitive files)" || res.Status != demiurge.EffectDenied {
		t.Fatalf("asked %+v, %s %q", asked, res.Status, res.ModelView)
	}
}

// TestReadSessionGrantCoversOnePath: "allow for this session" on one
// outside file answers later reads of that file only.
func TestReadSessionGrantCoversOnePath(t *testing.T) {
	e, _ := readApprovalEnv(t)
	d := newDispatcher(e)
	a := &recordingApprover{decision: effect.DecisionAllowSession}
	for _, p := range []string{"~/note.txt", "~/note.txt", "~/other.txt"} {
		if res := d.call(a, "read_file", map[string]any{"path": p}); res.Status != demiurge.EffectSucceeded {
			t.Fatalf("%s: %s %q", p, res.Status, res.ModelView)
		}
	}
	asked := a.requests()
	if len(asked) != 2 || !strings.HasSuffix(asked[0].Target, "/note.txt") || !strings.HasSuffix(asked[1].Target, "/other.txt") {
		t.Fatalf("questions %+v, want note.txt then other.txt", asked)
	}
	// A search with include_sensitive is not covered by a grant for the
	// same root without it.
	b := &recordingApprover{decision: effect.DecisionAllowSession}
	d.call(b, "search_files", map[string]any{"query": "x", "path": "~"})
	d.call(b, "search_files", map[string]any{"query": "x", "path": "~", "include_sensitive": true})
	if n := len(b.requests()); n != 2 {
		t.Fatalf("asked %d times, want 2", n)
	}
}
