package corerepo

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// memLedger is a Ledger in memory with the store's compare-and-swap; the
// store's own tests (and the host's, on PostgreSQL) cover the real one.
type memLedger struct {
	mu    sync.Mutex
	live  demiurge.CoreLive
	revs  map[string]demiurge.CoreRevision
	reads int
}

func newMemLedger() *memLedger { return &memLedger{revs: map[string]demiurge.CoreRevision{}} }

func (m *memLedger) CoreLive(context.Context) (demiurge.CoreLive, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return m.live, m.live.Revision != "", nil
}

func (m *memLedger) CoreRevision(_ context.Context, rev string) (demiurge.CoreRevision, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.revs[rev]
	return r, ok, nil
}

func (m *memLedger) PublishCore(_ context.Context, p demiurge.CorePublication) (demiurge.CoreLive, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live.Revision != p.Expected {
		return demiurge.CoreLive{}, demiurge.Errorf(demiurge.ECONFLICT, "shared core revision moved: expected %s, found %s", p.Expected, m.live.Revision)
	}
	for _, r := range p.Revisions {
		if _, ok := m.revs[r.Revision]; !ok {
			m.revs[r.Revision] = r
		}
	}
	m.live = demiurge.CoreLive{Revision: p.Revisions[len(p.Revisions)-1].Revision, Previous: p.Expected, Op: p.Op}
	return m.live, nil
}

// newSharedHome is newHome with a Ledger: another Host's home on the same
// runtime ledger.
func newSharedHome(t *testing.T, l Ledger, onSwitch func([]string)) (Paths, *Repo) {
	t.Helper()
	p := HomePaths(t.TempDir())
	if err := core.InstallTemplates(p.Agents, core.TemplateAll, false); err != nil {
		t.Fatal(err)
	}
	r, _, err := Init(context.Background(), p, Options{Ledger: l, OnSwitch: onSwitch}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return p, r
}

// The first Host publishes its live revision; a save on one Host is the
// revision the other's next EnsureSaved returns, with its files in that
// Host's checkout and the changed cores handed to OnSwitch; a rollback
// likewise. Nothing moved costs one ledger read.
func TestSharedLedgerCarriesSavesAndRollbacks(t *testing.T) {
	ctx := context.Background()
	l := newMemLedger()
	pa, a := newSharedHome(t, l, nil)
	var switched [][]string
	pb, b := newSharedHome(t, l, func(cores []string) { switched = append(switched, cores) })

	first, err := a.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.live.Revision != first || l.live.Op != "init" {
		t.Fatalf("the first Host's revision %s was not published: %+v", first, l.live)
	}
	if got, err := b.EnsureSaved(ctx); err != nil || got != first {
		t.Fatalf("the second Host runs %s, %v; want the published %s", got, err, first)
	}
	reads := l.reads
	if got, _ := b.EnsureSaved(ctx); got != first || l.reads != reads+1 {
		t.Fatalf("an EnsureSaved with nothing moved read the ledger %d times, want 1", l.reads-reads)
	}

	editFile(t, pa.Agents, "assistant/agent/SOUL.md", "", "Shared edit.\n")
	saved, err := a.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.live.Revision != saved.Revision || l.live.Op != "save" {
		t.Fatalf("the save was not published: %+v", l.live)
	}
	got, err := b.EnsureSaved(ctx)
	if err != nil || got != saved.Revision {
		t.Fatalf("after A's save B runs %s, %v; want %s", got, err, saved.Revision)
	}
	if body := readFile(t, pb.Agents, "assistant/agent/SOUL.md"); !strings.HasPrefix(body, "Shared edit.\n") {
		t.Fatalf("B's checkout holds %q", body)
	}
	mustClean(t, b)
	if len(switched) != 1 || strings.Join(switched[0], ",") != "assistant" {
		t.Fatalf("OnSwitch got %v, want [[assistant]]", switched)
	}
	// A Host that joins now starts on the shared revision, with the
	// shared previous one, whatever its own first revision was.
	_, c := newSharedHome(t, l, nil)
	if got, err := c.EnsureSaved(ctx); err != nil || got != saved.Revision {
		t.Fatalf("a joining Host runs %s, %v; want %s", got, err, saved.Revision)
	}
	if prev, err := c.Previous(); err != nil || prev != first {
		t.Fatalf("a joining Host's previous revision is %s, %v; want the shared %s", prev, err, first)
	}

	rb, err := b.Rollback(ctx, "previous", "undo")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.EnsureSaved(ctx); err != nil || got != rb.Revision {
		t.Fatalf("after B's rollback A runs %s, %v; want %s", got, err, rb.Revision)
	}
	if body := readFile(t, pa.Agents, "assistant/agent/SOUL.md"); strings.Contains(body, "Shared edit.") {
		t.Fatalf("A's checkout still holds the rolled back edit: %q", body)
	}
	vs, err := a.Versions(5)
	if err != nil || len(vs) != 3 || vs[0].Revision != rb.Revision || vs[1].Revision != saved.Revision || vs[2].Revision != first {
		t.Fatalf("A's history: %+v, %v", vs, err)
	}
}

// Unsaved edits on a Host whose shared revision moved are refused, neither
// saved nor merged, until discarded; Discard then adopts the shared
// revision. A save that loses to another Host's publication changes
// nothing and says so.
func TestSharedLedgerRefusesEditsOnAMovedRevision(t *testing.T) {
	ctx := context.Background()
	l := newMemLedger()
	pa, a := newSharedHome(t, l, nil)
	pb, b := newSharedHome(t, l, nil)
	base, err := a.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Follow(ctx); err != nil {
		t.Fatal(err)
	}
	editFile(t, pa.Agents, "assistant/agent/SOUL.md", "", "From A.\n")
	saved, err := a.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	editFile(t, pb.Agents, "evolver/agent/SOUL.md", "", "From B.\n")
	_, err = b.EnsureSaved(ctx)
	wantCode(t, err, demiurge.ECONFLICT, "local agent edits were made on core revision "+base[:12]+", but another Host moved the shared live revision to "+saved.Revision[:12]+": ['evolver/agent/SOUL.md']")
	if !strings.Contains(err.Error(), "run `demiurge core discard --yes`") {
		t.Fatalf("the refusal names no way out: %v", err)
	}
	_, err = b.Save(ctx, SaveOptions{})
	wantCode(t, err, demiurge.ECONFLICT, "another Host moved the shared live revision")
	if l.live.Revision != saved.Revision || !strings.HasPrefix(readFile(t, pb.Agents, "evolver/agent/SOUL.md"), "From B.\n") {
		t.Fatal("a refused save changed the ledger or dropped the edit")
	}
	undone, err := b.Discard(ctx)
	if err != nil || len(undone) != 1 {
		t.Fatalf("Discard = %v, %v", undone, err)
	}
	if live := mustLive(t, b); live != saved.Revision {
		t.Fatalf("after Discard B is on %s, want %s", live, saved.Revision)
	}

	// A publication that loses: the ledger moves under a Host that read it.
	editFile(t, pb.Agents, "assistant/agent/SOUL.md", "", "B again.\n")
	live := mustLive(t, b)
	h, err := b.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.live.Revision = base // another Host's rollback, say
	l.mu.Unlock()
	_, err = b.saveLocked(ctx, SaveOptions{})
	h.Unlock()
	wantCode(t, err, demiurge.ECONFLICT, "the shared live revision moved while this Host made its save")
	if mustLive(t, b) != live {
		t.Fatal("a lost publication moved the local live revision")
	}
	if _, err := os.Stat(pb.Agents); err != nil {
		t.Fatal(err)
	}
}
