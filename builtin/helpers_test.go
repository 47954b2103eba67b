package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

var allToolsets = []string{"coding", "demiurge_control", "schedule"}

// env is one tool-call environment: a workspace, a runtime home, a core
// directory, and the Deps and turn identity the tools see.
type env struct {
	t    testing.TB
	ws   string // workspace root as given to the turn
	home string
	core string // core directory (agents/demo)
	deps builtin.Deps
	tc   effect.TurnContext
}

func newEnv(t testing.TB) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{
		t:    t,
		ws:   mkdir(t, filepath.Join(base, "ws")),
		home: mkdir(t, filepath.Join(base, "home")),
		core: filepath.Join(base, "home", "agents", "demo"),
	}
	writeFiles(t, e.core, map[string]string{
		"agent.yaml":           "schema_version: 1\nagent:\n  id: demo\ntools:\n  toolsets: [coding]\n",
		"agent/SOUL.md":        "You are demo.\n",
		"agent/pipelines.yaml": "schema_version: 1\n",
	})
	e.deps = builtin.Deps{
		Home:       e.home,
		CoreDir:    func(string) string { return e.core },
		SkillsDir:  func(string) string { return filepath.Join(e.core, "agent", "skills") },
		CoreLoader: func(dir string) error { _, err := core.Load(dir); return err },
	}
	e.tc = effect.TurnContext{
		SessionID: "session_1", TurnID: "turn_1", CoreID: "demo", CoreRevision: "rev",
		Workspace: e.ws, Scope: demiurge.OperatorScope("session_1"),
		Grants: policy.NewGrants([]string{"fs.read", "fs.write", "session.read"}, nil),
	}
	return e
}

// call prepares and runs a tool's call the way the dispatcher does once
// its capability and approval checks have passed: arguments as decoded JSON,
// the entry bound in a catalog of every builtin.
func (e *env) call(name string, args map[string]any) effect.Outcome {
	e.t.Helper()
	out, err := e.callErr(name, args)
	if err != nil {
		e.t.Fatalf("%s: adapter error: %v", name, err)
	}
	return out
}

func (e *env) callErr(name string, args map[string]any) (effect.Outcome, error) {
	e.t.Helper()
	return e.invoker(name)(context.Background(), args)
}

// invoker binds the tool name once and returns a function that calls its
// adapter with the turn's identity.
func (e *env) invoker(name string) func(context.Context, map[string]any) (effect.Outcome, error) {
	e.t.Helper()
	defs := builtin.Definitions(allToolsets, e.deps)
	cat, err := effect.NewCatalog(e.tc.CoreID, e.tc.CoreRevision, defs)
	if err != nil {
		e.t.Fatal(err)
	}
	var def effect.Definition
	for _, d := range defs {
		if d.Name == name {
			def = d
		}
	}
	var entry *effect.Entry
	for _, en := range cat.Entries() {
		if en.Name == name {
			entry = en
		}
	}
	if entry == nil {
		e.t.Fatalf("%s is not in the catalog", name)
	}
	tc := e.tc
	return func(ctx context.Context, args map[string]any) (effect.Outcome, error) {
		return prepareAndRun(ctx, def.Adapter, effect.Invocation{
			CallID: "call_1", Args: jsonArgs(e.t, args), Entry: entry, Catalog: cat, Turn: tc,
		})
	}
}

// prepareAndRun prepares one call of a and runs it, as the dispatcher does once the
// call's capability and approval checks have passed.
func prepareAndRun(ctx context.Context, a effect.Adapter, inv effect.Invocation) (effect.Outcome, error) {
	call, out := a.Prepare(ctx, inv)
	if out != nil {
		return *out, nil
	}
	return call.Run(ctx)
}

// jsonArgs round-trips args through JSON, so numbers are float64 as the
// dispatcher delivers them.
func jsonArgs(t testing.TB, args map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func (e *env) path(rel string) string { return filepath.Join(e.ws, filepath.FromSlash(rel)) }

func (e *env) write(rel, content string) string {
	e.t.Helper()
	writeFiles(e.t, e.ws, map[string]string{rel: content})
	return e.path(rel)
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		mkdir(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdir(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	mkdir(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// wantOK fails unless out is a successful outcome.
func wantOK(t *testing.T, out effect.Outcome) {
	t.Helper()
	if out.IsError || !out.ExecutionStarted {
		t.Fatalf("outcome is_error=%v started=%v: %q", out.IsError, out.ExecutionStarted, out.Content)
	}
}

// wantRefused fails unless out refuses the call with content want, before
// anything started; denial is the expected Denial ("" for invalid input).
func wantRefused(t *testing.T, out effect.Outcome, want, denial string) {
	t.Helper()
	if !out.IsError || out.ExecutionStarted {
		t.Fatalf("outcome is_error=%v started=%v: %q, want a refusal", out.IsError, out.ExecutionStarted, out.Content)
	}
	if out.Content != want {
		t.Fatalf("content=%q, want %q", out.Content, want)
	}
	if out.Denial != denial {
		t.Fatalf("denial=%q, want %q", out.Denial, denial)
	}
}

// listTree returns the slash paths under dir, for "nothing was written"
// checks.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hasTemp(names []string) bool {
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			return true
		}
	}
	return false
}
