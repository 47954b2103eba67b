package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var confirmInstruction = regexp.MustCompile("run `demiurge core save --confirm (confirm-save:assistant:[0-9]{8}T[0-9]{6}Z:[0-9a-f]{64})`")

func TestCoreLocalEditsSavedByTheNextTurn(t *testing.T) {
	e := newEnv(t)
	first, r := e.runJSON("hello")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if st := e.coreStatus(); !st.Clean || st.Revision != first.CoreRevision || len(st.Changes) != 0 {
		t.Fatalf("status of a fresh home %+v (turn revision %s)", st, first.CoreRevision)
	}

	soul := coreRead(t, e.soulPath())
	edited := soul + "\nAlways answer in French.\n"
	if err := os.WriteFile(e.soulPath(), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	st := e.coreStatus()
	if st.Clean || len(st.Changes) != 1 || st.Changes[0] != (coreFileChange{Path: "assistant/agent/SOUL.md", Change: "modified"}) {
		t.Fatalf("status after a hand edit %+v", st)
	}
	if d := e.run("", "core", "diff"); d.code != 0 || !strings.Contains(d.stdout, "+Always answer in French.") {
		t.Fatalf("diff: exit %d %q", d.code, d.stdout)
	}
	if st.Revision != first.CoreRevision {
		t.Fatal("an unsaved edit moved live")
	}

	second, r := e.runJSON("hello again")
	if r.code != 0 || second.CoreRevision == first.CoreRevision {
		t.Fatalf("run after the edit: exit %d revision %s (before %s) %s", r.code, second.CoreRevision, first.CoreRevision, r.stderr)
	}
	vs := e.coreVersions()
	if len(vs) < 2 || vs[0].Revision != second.CoreRevision || !vs[0].Live || vs[0].Summary != "save assistant authored prompt edits" || vs[1].Revision != first.CoreRevision {
		t.Fatalf("versions %+v", vs)
	}
	if st := e.coreStatus(); !st.Clean || st.Revision != second.CoreRevision {
		t.Fatalf("status after the save %+v", st)
	}
	if got := coreRead(t, e.soulPath()); got != edited {
		t.Fatal("the save changed the edited file")
	}
}

func TestCoreLocalGrantNeedsConfirmToken(t *testing.T) {
	e := newEnv(t)
	first, _ := e.runJSON("hello")
	manifestPath := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	manifest := coreRead(t, manifestPath)
	granted := strings.Replace(manifest, "    session.read: {}\n", "    session.read: {}\n    secret.bind:DEPLOY_TOKEN: {}\n", 1)
	if granted == manifest {
		t.Fatal("template agent.yaml has no `session.read` grant to add after")
	}
	if err := os.WriteFile(manifestPath, []byte(granted), 0o600); err != nil {
		t.Fatal(err)
	}

	// The next turn refuses to run on an unconfirmed grant, naming the
	// command that confirms it but no token: a turn's errors can reach a
	// model.
	r := e.run("", "run", "--json", "hello")
	if r.code != 2 || strings.Contains(r.stderr, "confirm-save:") || !strings.Contains(r.stderr, "local agent edits failed gates: approval_security: assistant/agent.yaml: capabilities.defaults.secret.bind:DEPLOY_TOKEN") ||
		!strings.Contains(r.stderr, "operator confirmation required: run `demiurge core save` to confirm it") {
		t.Fatalf("run over a grant: exit %d stderr %q", r.code, r.stderr)
	}

	var refusal struct {
		Saved        bool   `json:"saved"`
		Revision     string `json:"revision"`
		ConfirmToken string `json:"confirm_token"`
		Gates        []struct {
			Phase  string `json:"phase"`
			Passed bool   `json:"passed"`
		} `json:"gates"`
		Error *struct{ Code, Message string } `json:"error"`
	}
	r = e.coreJSON(&refusal, "save")
	m := confirmInstruction.FindStringSubmatch(r.stderr)
	if r.code != 1 || refusal.Saved || m == nil || refusal.ConfirmToken != m[1] || refusal.Revision != first.CoreRevision || refusal.Error == nil {
		t.Fatalf("save without --confirm: exit %d %+v %s", r.code, refusal, r.stderr)
	}
	token := m[1]
	// A token made of public facts (the old plain digest form) is refused,
	// with a fresh token.
	r = e.coreJSON(nil, "save", "--confirm", "mcp-review:"+strings.Repeat("0", 64))
	if r.code != 1 || !strings.Contains(r.stderr, "confirmation token is an evolve review token") || !confirmInstruction.MatchString(r.stderr) {
		t.Fatalf("save with a wrong token: exit %d %s", r.code, r.stderr)
	}
	forged := token[:len(token)-64] + strings.Repeat("0", 64)
	if r := e.coreJSON(nil, "save", "--confirm", forged); r.code != 1 || !strings.Contains(r.stderr, "confirmation token does not confirm this change") {
		t.Fatalf("save with a forged token: exit %d %s", r.code, r.stderr)
	}
	if st := e.coreStatus(); st.Clean || st.Revision != first.CoreRevision {
		t.Fatalf("a refused save changed live: %+v", st)
	}
	var saved struct {
		Saved    bool   `json:"saved"`
		Revision string `json:"revision"`
	}
	if r := e.coreJSON(&saved, "save", "--confirm", token, "--reason", "deploys need the token"); r.code != 0 || !saved.Saved {
		t.Fatalf("save with the token: exit %d %+v %s", r.code, saved, r.stderr)
	}
	out, r := e.runJSON("hello again")
	if r.code != 0 || out.CoreRevision != saved.Revision {
		t.Fatalf("run after the confirmed save: exit %d %+v %s", r.code, out, r.stderr)
	}
}

func TestCoreDiscardRestoresLiveAndSymlinkFailsGate(t *testing.T) {
	e := newEnv(t)
	first, _ := e.runJSON("hello")
	soul := coreRead(t, e.soulPath())
	extra := filepath.Join(e.home, "agents", "assistant", "agent", "skills", "scratch.md")
	if err := os.WriteFile(e.soulPath(), []byte("# scribbled\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, []byte("---\nname: scratch\ndescription: scratch\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var disc struct {
		Revision  string           `json:"revision"`
		Discarded []coreFileChange `json:"discarded"`
	}
	if r := e.coreJSON(&disc, "discard", "--yes"); r.code != 0 || disc.Revision != first.CoreRevision || len(disc.Discarded) != 2 {
		t.Fatalf("discard: exit %d %+v %s", r.code, disc, r.stderr)
	}
	if got := coreRead(t, e.soulPath()); got != soul {
		t.Fatalf("SOUL.md after discard %q", got)
	}
	if _, err := os.Stat(extra); !os.IsNotExist(err) {
		t.Fatalf("added file survived discard: %v", err)
	}
	if st := e.coreStatus(); !st.Clean {
		t.Fatalf("status after discard %+v", st)
	}

	// A link in the agents tree could make a core read outside it: the
	// gate refuses it by path and no turn runs.
	link := filepath.Join(e.home, "agents", "assistant", "agent", "skills", "leak.md")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "run", "--json", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, "local agent edits failed gates: path_safety:") || !strings.Contains(r.stderr, "assistant/agent/skills/leak.md") {
		t.Fatalf("run over a symlink: exit %d %q", r.code, r.stderr)
	}
	if r := e.coreJSON(nil, "save"); r.code != 1 || !strings.Contains(r.stderr, "assistant/agent/skills/leak.md") {
		t.Fatalf("save of a symlink: exit %d %s", r.code, r.stderr)
	}
	if st := e.coreStatus(); st.Revision != first.CoreRevision {
		t.Fatalf("live moved to %s", st.Revision)
	}
	if r := e.coreJSON(nil, "discard", "--yes"); r.code != 0 {
		t.Fatalf("discard of the link: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Fatalf("symlink survived discard: %v", err)
	}
	if out, r := e.runJSON("hello"); r.code != 0 || out.CoreRevision != first.CoreRevision {
		t.Fatalf("run after discard: exit %d %+v", r.code, out)
	}
}
