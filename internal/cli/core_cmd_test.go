package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
)

const soul = "assistant/agent/SOUL.md"

// The repository commands in their text form, over one local edit: status
// and diff show it, save makes it a revision, versions lists both,
// rollback goes back, discard restores live.
func TestCoreRepositoryCommands(t *testing.T) {
	h := newHome(t)
	r := h.ok("core", "status")
	if !strings.HasPrefix(r.stdout, "live revision: ") || !strings.Contains(r.stdout, "previous revision: (none)\nno local edits\n") {
		t.Fatalf("core status:\n%s", r.stdout)
	}
	if r := h.ok("core", "diff"); r.stdout != "no local edits\n" {
		t.Fatalf("core diff: %q", r.stdout)
	}
	if r := h.ok("core", "save"); !strings.HasPrefix(r.stdout, "no local edits; live revision ") {
		t.Fatalf("core save: %q", r.stdout)
	}
	if r := h.ok("core", "check"); r.stdout != "core repository is consistent\n" {
		t.Fatalf("core check: %q", r.stdout)
	}

	h.coreFile(soul, "# Edited\n")
	if r := h.ok("core", "status"); !strings.Contains(r.stdout, "local edits (saved before the next turn, or `demiurge core save`):\n  M "+soul+"\n") {
		t.Fatalf("core status with an edit:\n%s", r.stdout)
	}
	if r := h.ok("core", "diff"); !strings.Contains(r.stdout, "+# Edited") {
		t.Fatalf("core diff:\n%s", r.stdout)
	}
	if r := h.ok("core", "save", "--reason", "cli test"); !strings.HasPrefix(r.stdout, "saved ") {
		t.Fatalf("core save: %q", r.stdout)
	}
	r = h.ok("core", "versions")
	if !strings.HasPrefix(r.stdout, "REVISION") || strings.Count(r.stdout, "\n") != 3 || !strings.Contains(r.stdout, " live ") || !strings.Contains(r.stdout, " previous ") {
		t.Fatalf("core versions:\n%s", r.stdout)
	}
	if r := h.ok("core", "rollback"); !strings.HasPrefix(r.stdout, "rollback committed: ") || !strings.HasSuffix(r.stdout, " (takes effect next turn)\n") {
		t.Fatalf("core rollback: %q", r.stdout)
	}

	h.coreFile(soul, "# Edited again\n")
	if r := h.ok("core", "discard", "--yes"); !strings.HasPrefix(r.stdout, "discarded M "+soul+"\nagents tree is at live revision ") {
		t.Fatalf("core discard:\n%s", r.stdout)
	}
	if r := h.ok("core", "discard", "--yes"); r.stdout != "no local edits\n" {
		t.Fatalf("second discard: %q", r.stdout)
	}
}

// A refused repository operation exits 1 with one line on stderr: a
// rollback to an unknown revision, a save the approval gate refuses (and,
// with --json, reports with its confirm token on stdout).
func TestCoreRefusalsExit1(t *testing.T) {
	h := newHome(t)
	wantOneLine(t, h.run("", "core", "rollback", "0123456789abcdef0123456789abcdef01234567"), 1)

	// A grant the operator did not confirm: the save is refused until the
	// confirm token is given.
	agent := filepath.Join(h.dir, "agents", "assistant", "agent.yaml")
	manifest, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	h.coreFile("assistant/agent.yaml", strings.Replace(string(manifest), "    session.read: {}\n", "    session.read: {}\n    secret.bind:DEPLOY_TOKEN: {}\n", 1))
	wantOneLine(t, h.run("", "core", "save"), 1)
	var refusal struct {
		Saved        bool   `json:"saved"`
		ConfirmToken string `json:"confirm_token"`
		Error        *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	h.decode(1, &refusal, "core", "save", "--json")
	if refusal.Saved || refusal.ConfirmToken == "" || refusal.Error == nil {
		t.Fatalf("core save --json refusal = %+v", refusal)
	}
	if r := h.ok("core", "save", "--confirm", refusal.ConfirmToken); !strings.HasPrefix(r.stdout, "saved ") {
		t.Fatalf("confirmed save: %q", r.stdout)
	}
}

// evolve start runs the evolver on a copy of live; review commits and
// gates the proposal; promote makes it live; an unknown run is refused
// with exit 1.
func TestCoreEvolve(t *testing.T) {
	h := newHome(t)
	script := demiurgetest.Script(t, demiurgetest.Call("write_file", map[string]any{"path": soul, "content": "# Evolved\n"}), demiurgetest.Reply("rewrote SOUL.md"))
	r := h.ok("core", "evolve", "start", "--fake-script", script, "be", "brief")
	if !strings.Contains(r.stdout, "  M "+soul+"\n") || !strings.Contains(r.stdout, "evolver: rewrote SOUL.md\n") || !strings.Contains(r.stdout, "next: demiurge core evolve review evolve_") {
		t.Fatalf("evolve start:\n%s", r.stdout)
	}
	_, run, _ := strings.Cut(r.stdout, "next: demiurge core evolve review ")
	run = strings.TrimSpace(run)
	if r := h.ok("core", "evolve", "review", run); !strings.HasPrefix(r.stdout, "review "+run+": passed\n") {
		t.Fatalf("evolve review:\n%s", r.stdout)
	}
	if r := h.ok("core", "evolve", "promote", run); !strings.Contains(r.stdout, "new revision: ") || !strings.HasSuffix(r.stdout, "takes effect next turn\n") {
		t.Fatalf("evolve promote:\n%s", r.stdout)
	}
	if r := h.ok("core", "evolve", "discard", run); r.stdout != "discarded evolve run "+run+"\n" {
		t.Fatalf("evolve discard: %q", r.stdout)
	}
	for _, sub := range []string{"review", "promote", "discard"} {
		wantOneLine(t, h.run("", "core", "evolve", sub, run), 1, "evolve run not found: "+run)
	}
	var refusal struct {
		RunID    string `json:"run_id"`
		Promoted bool   `json:"promoted"`
		Error    *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if h.decode(1, &refusal, "core", "evolve", "promote", run, "--json"); refusal.RunID != run || refusal.Promoted || refusal.Error == nil {
		t.Fatalf("evolve promote --json of a discarded run = %+v", refusal)
	}
	// A core that does not exist is a configuration error.
	wantOneLine(t, h.run("", "--core", "no_such_core", "core", "evolve", "start", "goal"), 2, `unknown core "no_such_core"`)
}
