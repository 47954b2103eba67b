package corerepo

import (
	"context"
	"testing"
	"time"
)

// A Repo younger than armDelay does not arm its watch for the calls of a
// short process, which then pays nothing for it at exit; a Repo that goes
// on serving turns arms it at its armAfterCalls-th call and answers from
// the cache after that.
func TestEnsureSavedWatchesOnlyAfterAFewCalls(t *testing.T) {
	ctx := context.Background()
	_, r := newHome(t)
	for range armAfterCalls - 1 {
		if _, err := r.EnsureSaved(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r.clean.watch != nil || r.clean.rev != "" {
		t.Fatalf("a Repo open for less than armDelay armed its watch within %d calls", armAfterCalls-1)
	}
	rev, err := r.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.clean.watch == nil || r.clean.rev != rev {
		t.Fatalf("call %d did not arm the watch (cached %q, want %q)", armAfterCalls, r.clean.rev, rev)
	}
	if got, ok := r.clean.get(); !ok || got != rev {
		t.Fatalf("clean cache after arming = %q, %v; want %q", got, ok, rev)
	}
}

// EnsureSaved answers from its clean cache only while nothing changed: an
// edit after a cached answer is saved by the next call, and a change made
// by another Repo of the same home (another process) is seen too.
func TestEnsureSavedCacheEndsWithAnyChange(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	r.clean.opened = time.Now().Add(-armDelay)
	first, err := r.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if rev, err := r.EnsureSaved(ctx); err != nil || rev != first {
			t.Fatalf("EnsureSaved = %q, %v; want the unchanged %q", rev, err, first)
		}
	}
	if !r.clean.watch.Quiet() || r.clean.rev != first {
		t.Fatalf("clean cache not in use: rev %q", r.clean.rev)
	}

	writeFile(t, p.Agents, "assistant/agent/skills/notes/SKILL.md", "---\nname: notes\ndescription: keep notes\n---\nKeep notes.\n")
	edited, err := r.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if edited == first {
		t.Fatal("an edit after a cached answer was not saved")
	}
	if rev, err := r.EnsureSaved(ctx); err != nil || rev != edited {
		t.Fatalf("EnsureSaved after the save = %q, %v; want %q", rev, err, edited)
	}

	other, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	other.clean.opened = time.Now().Add(-armDelay)
	writeFile(t, p.Agents, "assistant/agent/skills/notes/SKILL.md", "---\nname: notes\ndescription: keep notes\n---\nKeep short notes.\n")
	byOther, err := other.EnsureSaved(ctx)
	if err != nil || byOther == edited {
		t.Fatalf("other Repo: %q, %v", byOther, err)
	}
	if rev, err := r.EnsureSaved(ctx); err != nil || rev != byOther {
		t.Fatalf("EnsureSaved after another Repo saved = %q, %v; want %q", rev, err, byOther)
	}
}

// After Close nothing is watched and every call scans, with the same
// answers.
func TestEnsureSavedAfterClose(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	r.clean.opened = time.Now().Add(-armDelay)
	rev, err := r.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if again, err := r.EnsureSaved(ctx); err != nil || again != rev || r.clean.rev != "" {
		t.Fatalf("EnsureSaved after Close = %q, %v (cached %q)", again, err, r.clean.rev)
	}
	writeFile(t, p.Agents, "assistant/agent/skills/notes/SKILL.md", "---\nname: notes\ndescription: keep notes\n---\nKeep notes.\n")
	if saved, err := r.EnsureSaved(ctx); err != nil || saved == rev {
		t.Fatalf("edit after Close: %q, %v", saved, err)
	}
}
