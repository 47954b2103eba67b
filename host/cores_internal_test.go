package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A core Open preloads is parsed once: its first Load takes what warm
// parsed while the checkout is still that revision, and parses again when
// an edit made a new revision in between.
func TestPreloadedCoreIsParsedOnce(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	open := func() *Host {
		t.Helper()
		h, err := Open(ctx, Options{Home: home, OneShot: true, Preload: []string{"assistant"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close(ctx) })
		return h
	}

	h := open()
	warmed, ok := h.cores.warmed["assistant"]
	if !ok {
		t.Fatal("Open did not warm the preloaded core")
	}
	snap, err := h.cores.Load(ctx, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Core != warmed.Core || snap.Revision != warmed.Revision {
		t.Fatalf("Load parsed again (revision %s) where warm had parsed revision %s", snap.Revision, warmed.Revision)
	}
	if _, left := h.cores.warmed["assistant"]; left {
		t.Fatal("the warmed core stayed after Load took it")
	}

	h = open()
	warmed = h.cores.warmed["assistant"]
	skill := filepath.Join(h.home.CoreDir("assistant"), "agent", "skills", "notes", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: notes\ndescription: keep notes\n---\nKeep notes.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	snap, err = h.cores.Load(ctx, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Revision == warmed.Revision || snap.Core == warmed.Core {
		t.Fatalf("Load took the core warm parsed at %s after an edit", warmed.Revision)
	}
	if _, ok := snap.Core.Skill("notes"); !ok {
		t.Fatal("the core Load returned lacks the skill the edit added")
	}
}
