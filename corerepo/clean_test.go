package corerepo

import (
	"context"
	"testing"
)

// A Repo opened without WatchCheckout (a short process) never arms a
// watch, which it would pay for at exit; one opened with it arms the watch
// at its first call and answers from the cache after that.
func TestEnsureSavedWatchesOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	p, short := newHome(t)
	for range 5 {
		if _, err := short.EnsureSaved(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if short.clean.watch != nil || short.clean.rev != "" {
		t.Fatal("a Repo opened without WatchCheckout armed a watch")
	}
	r := openWatching(t, p)
	rev, err := r.EnsureSaved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.clean.watch == nil || r.clean.rev != rev {
		t.Fatalf("the first call did not arm the watch (cached %q, want %q)", r.clean.rev, rev)
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
	p, _ := newHome(t)
	r := openWatching(t, p)
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

	other := openWatching(t, p)
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
	p, _ := newHome(t)
	r := openWatching(t, p)
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

// openWatching opens a second Repo of p's home with WatchCheckout, as a
// serving Host does, and closes it at the end of the test.
func openWatching(t *testing.T, p Paths) *Repo {
	t.Helper()
	r, err := Open(p, Options{WatchCheckout: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}
