package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// A Host that was closed while another Host of its PostgreSQL ledger
// saved a revision runs that revision once it opens again: its agents
// tree holds it as soon as Open returns, and its next turn records it.
func TestRestartedHostAdoptsTheSharedLiveRevision(t *testing.T) {
	url := demiurgetest.PostgresDatabase(t)
	ctx := context.Background()
	getenv := func(k string) string {
		if k == host.DatabaseURLEnv {
			return url
		}
		return ""
	}
	homeA, homeB := t.TempDir(), t.TempDir()
	b, err := host.Open(ctx, host.Options{Home: homeB, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	first, err := b.Run(ctx, turn.Request{Text: "hello"})
	if err != nil || first.Outcome != turn.OutcomeCompleted {
		t.Fatalf("B's first turn: %+v, %v", first, err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}

	a, err := host.OpenHomeRepo(ctx, homeA, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if live, err := a.Live(); err != nil || live != first.CoreRevision {
		t.Fatalf("A opened on %s, %v; want the shared %s", live, err, first.CoreRevision)
	}
	soul := filepath.Join(homeA, "agents", "assistant", "agent", "SOUL.md")
	if err := os.WriteFile(soul, []byte("# Saved on A\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	saved, err := a.Save(ctx, corerepo.SaveOptions{Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b, err = host.Open(ctx, host.Options{Home: homeB, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	got, err := os.ReadFile(filepath.Join(homeB, "agents", "assistant", "agent", "SOUL.md"))
	if err != nil || string(got) != "# Saved on A\n" {
		t.Fatalf("B's SOUL.md after reopening: %q, %v", got, err)
	}
	res, err := b.Run(ctx, turn.Request{Text: "again"})
	if err != nil || res.Outcome != turn.OutcomeCompleted || res.CoreRevision != saved.Revision {
		t.Fatalf("B's turn after reopening ran %s (%v, %v); want %s", res.CoreRevision, res.Outcome, err, saved.Revision)
	}
}
