package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// Two Hosts on two runtime homes share one PostgreSQL ledger and nothing
// else (docs/architecture.md, "Cores on several Hosts").

// sharedLedger points every invocation of the test at a new PostgreSQL
// ledger (skipped without demiurgetest.EnvPostgres).
func sharedLedger(t *testing.T) {
	t.Helper()
	t.Setenv(host.DatabaseURLEnv, demiurgetest.PostgresDatabase(t))
}

type coreRunJSON struct {
	CoreRevision string `json:"core_revision"`
	Outcome      string `json:"outcome"`
}

// turnRevision runs one turn on h and returns the core revision it ran.
func (h *home) turnRevision(text string) string {
	h.t.Helper()
	var r coreRunJSON
	h.decode(0, &r, "run", "--json", text)
	if r.Outcome != "completed" || len(r.CoreRevision) != 40 {
		h.t.Fatalf("run %q: %+v", text, r)
	}
	return r.CoreRevision
}

func (h *home) agentsFile(rel string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "agents", filepath.FromSlash(rel)))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(data)
}

// A save, a rollback and an evolve promotion on one Host are the revision
// the other Host's next turn runs, with the files in its agents tree.
func TestCoresOnTwoHostsFollowSavesRollbacksAndPromotions(t *testing.T) {
	sharedLedger(t)
	a, b := newHome(t), newHome(t)
	first := a.turnRevision("hello from A")
	if got := b.turnRevision("hello from B"); got != first {
		t.Fatalf("B's first turn ran %s, want A's published revision %s", got, first)
	}

	a.coreFile(soul, "# Shared soul\n")
	var saved struct {
		Saved    bool   `json:"saved"`
		Revision string `json:"revision"`
	}
	a.decode(0, &saved, "core", "save", "--json")
	if !saved.Saved {
		t.Fatalf("core save on A: %+v", saved)
	}
	if got := b.turnRevision("after the save"); got != saved.Revision {
		t.Fatalf("after A's save B ran %s, want %s", got, saved.Revision)
	}
	if got := b.agentsFile(soul); got != "# Shared soul\n" {
		t.Fatalf("B's %s holds %q after A's save", soul, got)
	}

	var rolled struct {
		Revision string `json:"revision"`
	}
	b.decode(0, &rolled, "core", "rollback", "--json")
	if got := a.turnRevision("after the rollback"); got != rolled.Revision {
		t.Fatalf("after B's rollback A ran %s, want %s", got, rolled.Revision)
	}
	if got := a.agentsFile(soul); strings.Contains(got, "Shared soul") {
		t.Fatalf("A's %s still holds the rolled back edit: %q", soul, got)
	}

	script := demiurgetest.Script(t, demiurgetest.Call("write_file", map[string]any{"path": soul, "content": "# Evolved\n"}), demiurgetest.Reply("rewrote SOUL.md"))
	var start struct {
		RunID string `json:"run_id"`
	}
	a.decode(0, &start, "core", "evolve", "start", "--json", "--fake-script", script, "be", "brief")
	a.ok("core", "evolve", "review", start.RunID)
	var promoted struct {
		Promoted    bool   `json:"promoted"`
		NewRevision string `json:"new_revision"`
	}
	a.decode(0, &promoted, "core", "evolve", "promote", start.RunID, "--json")
	if !promoted.Promoted {
		t.Fatalf("promote on A: %+v", promoted)
	}
	if got := b.turnRevision("after the promotion"); got != promoted.NewRevision {
		t.Fatalf("after A's promotion B ran %s, want %s", got, promoted.NewRevision)
	}
	if got := b.agentsFile(soul); got != "# Evolved\n" {
		t.Fatalf("B's %s holds %q after A's promotion", soul, got)
	}
	var versions []struct {
		Revision string `json:"revision"`
	}
	b.decode(0, &versions, "core", "versions", "--json")
	if len(versions) < 4 || versions[0].Revision != promoted.NewRevision || versions[1].Revision != rolled.Revision || versions[2].Revision != saved.Revision {
		t.Fatalf("B's history after following A: %+v", versions)
	}
}

// Unsaved edits on a Host whose shared revision another Host moved are
// refused (neither saved nor merged) until discarded, which adopts the
// shared revision.
func TestCoresOnTwoHostsRefuseEditsOnAMovedRevision(t *testing.T) {
	sharedLedger(t)
	a, b := newHome(t), newHome(t)
	first := a.turnRevision("hello from A")
	if got := b.turnRevision("hello from B"); got != first {
		t.Fatalf("B ran %s, want %s", got, first)
	}
	a.coreFile(soul, "# From A\n")
	var saved struct {
		Revision string `json:"revision"`
	}
	a.decode(0, &saved, "core", "save", "--json")
	b.coreFile("evolver/agent/SOUL.md", "# From B\n")
	wantOneLine(t, b.run("", "run", "hello again"), 1,
		"local agent edits were made on core revision "+first[:12]+", but another Host moved the shared live revision to "+saved.Revision[:12],
		"'evolver/agent/SOUL.md'", "demiurge core discard --yes")
	wantOneLine(t, b.run("", "core", "save"), 1, "another Host moved the shared live revision")
	if got := b.agentsFile("evolver/agent/SOUL.md"); got != "# From B\n" {
		t.Fatalf("a refused turn dropped B's edit: %q", got)
	}
	b.ok("core", "discard", "--yes")
	if got := b.turnRevision("after the discard"); got != saved.Revision {
		t.Fatalf("after discarding B ran %s, want %s", got, saved.Revision)
	}
	if got := b.agentsFile(soul); got != "# From A\n" {
		t.Fatalf("B's %s holds %q", soul, got)
	}
}

// Two Hosts saving different edits at once: exactly one save wins and is
// the shared revision; the other is refused and changes nothing.
func TestCoresOnTwoHostsConcurrentSavesOneWins(t *testing.T) {
	sharedLedger(t)
	a, b := newHome(t), newHome(t)
	first := a.turnRevision("hello from A")
	if got := b.turnRevision("hello from B"); got != first {
		t.Fatalf("B ran %s, want %s", got, first)
	}
	a.coreFile(soul, "# From A\n")
	b.coreFile(soul, "# From B\n")
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, h := range []*home{a, b} {
		wg.Go(func() { results[i] = h.run("", "core", "save", "--json") })
	}
	wg.Wait()
	won := -1
	for i, r := range results {
		switch r.code {
		case 0:
			if won >= 0 {
				t.Fatalf("both saves won:\n%s\n%s", results[0].stdout, results[1].stdout)
			}
			won = i
		case 1:
			if !strings.Contains(r.stdout+r.stderr, "shared live revision") {
				t.Fatalf("the losing save says %q %q", r.stdout, r.stderr)
			}
		default:
			t.Fatalf("save exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
	}
	if won < 0 {
		t.Fatalf("no save won:\n%+v", results)
	}
	winner, loser := a, b
	want := "# From A\n"
	if won == 1 {
		winner, loser, want = b, a, "# From B\n"
	}
	rev := winner.turnRevision("winner")
	loser.ok("core", "discard", "--yes")
	if got := loser.turnRevision("loser"); got != rev {
		t.Fatalf("the loser runs %s after discarding, want the winner's %s", got, rev)
	}
	if got := loser.agentsFile(soul); got != want {
		t.Fatalf("the loser's %s holds %q, want %q", soul, got, want)
	}
}
