package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/effect"
)

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "a/b/c.txt", true},
		{"*.txt", "a/b/c.txt", true},
		{"*.txt", "c.txt.bak", false},
		{"a/*/c.txt", "a/b/x/c.txt", true},
		{"?.go", "a.go", true},
		{"?.go", "ab.go", false},
		{"[abc].go", "b.go", true},
		{"[!abc].go", "b.go", false},
		{"[!abc].go", "d.go", true},
		{"[a-c]*", "cat", true},
		{"[]].txt", "].txt", true},
		{"[.txt", "[.txt", true},
		{"a.b", "axb", false},
		{"(x)|y+", "(x)|y+", true},
		{"*.TXT", "a.txt", false},
		{"[\\]x", "\\x", true},
	} {
		re, err := compileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		if got := re.MatchString(tt.name); got != tt.want {
			t.Errorf("glob %q on %q = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	if _, err := compileGlob("[z-a]"); err == nil {
		t.Error("reversed range compiled")
	}
}

// invoke prepares one call of a and runs it, as the dispatcher does once
// the call's checks and approval have passed.
func invoke(ctx context.Context, a effect.Adapter, inv effect.Invocation) (effect.Outcome, error) {
	call, out := a.Prepare(ctx, inv)
	if out != nil {
		return *out, nil
	}
	return call.Run(ctx)
}

func searchInvoke(t *testing.T, ctx context.Context, ws string, args map[string]any) (effect.Outcome, error) {
	t.Helper()
	def := SearchFiles(Deps{})
	entry, err := def.Bind("c", "r")
	if err != nil {
		t.Fatal(err)
	}
	return invoke(ctx, def.Adapter, effect.Invocation{Args: args, Entry: entry, Turn: effect.TurnContext{Workspace: ws}})
}

// TestSearchFilesEntryBudget: a walk stops after the entry budget and says
// so, instead of walking a huge tree to the end.
func TestSearchFilesEntryBudget(t *testing.T) {
	ws := t.TempDir()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if err := os.WriteFile(filepath.Join(ws, name+".txt"), []byte("needle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := searchEntryBudget
	searchEntryBudget = 3
	t.Cleanup(func() { searchEntryBudget = saved })
	out, err := searchInvoke(t, context.Background(), ws, map[string]any{"query": "needle"})
	if err != nil {
		t.Fatal(err)
	}
	want := "a.txt:1: needle\nb.txt:1: needle\nc.txt:1: needle\n[search stopped after 3 entries; narrow path or pattern]"
	if out.Content != want || out.Data["entries_limit_reached"] != true || out.IsError {
		t.Fatalf("content=%q data=%v", out.Content, out.Data)
	}
}

func TestSearchFilesCancelled(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := searchInvoke(t, ctx, ws, map[string]any{"query": "needle"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
}

// TestSearchFilesWindow: only the first searchFileChars characters of a
// file are searched, and a long line is shown cut.
func TestSearchFilesWindow(t *testing.T) {
	ws := t.TempDir()
	body := strings.Repeat("é", searchFileChars-7) + "needle\n" + "needle again\n"
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := searchInvoke(t, context.Background(), ws, map[string]any{"query": "needle"})
	if err != nil {
		t.Fatal(err)
	}
	want := "f.txt:1: " + strings.Repeat("é", searchLineChars)
	if out.Content != want {
		t.Fatalf("content=%.80q…, want one cut line", out.Content)
	}
}
