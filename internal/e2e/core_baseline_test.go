package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const baselineGrantRefusal = "local agent edits failed gates: approval_security: assistant/agent.yaml: capabilities.defaults.secret.bind:DEPLOY_TOKEN unset -> granted"

// grantDeployToken adds a capability grant to the assistant's agent.yaml
// and returns the edited text.
func (e *env) grantDeployToken() string {
	e.t.Helper()
	p := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	manifest := coreRead(e.t, p)
	granted := strings.Replace(manifest, "    session.read: {}\n", "    session.read: {}\n    secret.bind:DEPLOY_TOKEN: {}\n", 1)
	if granted == manifest {
		e.t.Fatal("template agent.yaml has no `session.read` grant to add after")
	}
	if err := os.WriteFile(p, []byte(granted), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return granted
}

// wantGrantRefused runs a turn and asserts it is refused before it starts
// (exit 2) naming the grant and the command, without a token.
func (e *env) wantGrantRefused(when string) {
	e.t.Helper()
	r := e.run("", "run", "--json", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, baselineGrantRefusal) ||
		!strings.Contains(r.stderr, "operator confirmation required: run `demiurge core save` to confirm it") || strings.Contains(r.stderr, "confirm-save:") {
		e.t.Fatalf("run %s: exit %d stderr %q", when, r.code, r.stderr)
	}
}

// An edit made between `demiurge init` and the first turn is a local edit
// of the templates' baseline: a grant is not live until the operator
// confirms it.
func TestCoreBaselineEditBeforeFirstRunNeedsConfirmation(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	granted := e.grantDeployToken()
	e.wantGrantRefused("over a grant made before the first turn")

	// Not live: the only revision is the baseline, the grant is an unsaved
	// edit of it, and the file on disk is as the operator left it.
	vs := e.coreVersions()
	if len(vs) != 1 || vs[0].Summary != "core init" {
		t.Fatalf("versions %+v", vs)
	}
	st := e.coreStatus()
	if st.Clean || st.Revision != vs[0].Revision || len(st.Changes) != 1 || st.Changes[0] != (coreFileChange{Path: "assistant/agent.yaml", Change: "modified"}) {
		t.Fatalf("status %+v", st)
	}
	if d := e.run("", "core", "diff"); d.code != 0 || !strings.Contains(d.stdout, "+    secret.bind:DEPLOY_TOKEN: {}") {
		t.Fatalf("diff: exit %d %q", d.code, d.stdout)
	}
	if got := coreRead(t, filepath.Join(e.home, "agents", "assistant", "agent.yaml")); got != granted {
		t.Fatal("the refused turn changed agent.yaml")
	}

	// The operator's path: `core save` shows the token, `--confirm` saves.
	r := e.coreJSON(nil, "save")
	m := confirmInstruction.FindStringSubmatch(r.stderr)
	if r.code != 1 || m == nil || !strings.Contains(r.stderr, "capabilities.defaults.secret.bind:DEPLOY_TOKEN unset -> granted") {
		t.Fatalf("save without --confirm: exit %d %s", r.code, r.stderr)
	}
	var saved struct {
		Saved    bool   `json:"saved"`
		Revision string `json:"revision"`
	}
	if r := e.coreJSON(&saved, "save", "--confirm", m[1]); r.code != 0 || !saved.Saved {
		t.Fatalf("save --confirm: exit %d %+v %s", r.code, saved, r.stderr)
	}
	out, r := e.runJSON("hi")
	if r.code != 0 || out.Outcome != "completed" || out.CoreRevision != saved.Revision {
		t.Fatalf("run after the confirmed save: exit %d %+v %s", r.code, out, r.stderr)
	}
}

// Deleting runtime/core.git forgets confirmations and launders nothing:
// the new baseline is the templates, so an unchanged home runs on, and a
// grant (confirmed before or not) is refused again.
func TestCoreBaselineDeletedRepository(t *testing.T) {
	e := newEnv(t)
	first, r := e.runJSON("hello")
	if r.code != 0 || first.Outcome != "completed" {
		t.Fatalf("first run on a fresh home: exit %d %+v %s", r.code, first, r.stderr)
	}
	gitDir := filepath.Join(e.home, "runtime", "core.git")
	if err := os.RemoveAll(gitDir); err != nil {
		t.Fatal(err)
	}
	again, r := e.runJSON("hello again")
	if r.code != 0 || again.Outcome != "completed" {
		t.Fatalf("run after deleting core.git with the templates unchanged: exit %d %+v %s", r.code, again, r.stderr)
	}
	if st := e.coreStatus(); !st.Clean {
		t.Fatalf("status %+v", st)
	}

	e.grantDeployToken()
	e.wantGrantRefused("over a grant")
	r = e.coreJSON(nil, "save")
	m := confirmInstruction.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("save without --confirm: exit %d %s", r.code, r.stderr)
	}
	if r := e.coreJSON(nil, "save", "--confirm", m[1]); r.code != 0 {
		t.Fatalf("save --confirm: exit %d %s", r.code, r.stderr)
	}
	if _, r := e.runJSON("confirmed"); r.code != 0 {
		t.Fatalf("run after the confirmed save: exit %d %s", r.code, r.stderr)
	}
	if err := os.RemoveAll(gitDir); err != nil {
		t.Fatal(err)
	}
	e.wantGrantRefused("over a confirmed grant after deleting core.git")
	if vs := e.coreVersions(); len(vs) != 1 || vs[0].Summary != "core init" {
		t.Fatalf("versions after the refusal %+v", vs)
	}
}
