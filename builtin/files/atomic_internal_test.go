package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/effect"
)

// TestWriteAtomicFailureBeforeRename: a failure after the temporary file
// is complete, just before it would replace the target, leaves the old
// content and mode and removes the temporary file.
func TestWriteAtomicFailureBeforeRename(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "data.txt")
	if err := os.WriteFile(p, []byte("old content"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	var sawTemp bool
	failing := Deps{writer: rootfs.Writer{BeforeRename: func() error {
		entries, _ := os.ReadDir(ws)
		for _, e := range entries {
			sawTemp = sawTemp || strings.HasSuffix(e.Name(), ".tmp")
		}
		return errors.New("disk on fire")
	}}}

	for _, tool := range []struct {
		def  effect.Definition
		args map[string]any
	}{
		{WriteFile(failing), map[string]any{"path": "data.txt", "content": "new content"}},
		{Patch(failing), map[string]any{"path": "data.txt", "old": "old", "new": "new"}},
	} {
		entry, err := tool.def.Bind("c", "r")
		if err != nil {
			t.Fatal(err)
		}
		out, err := invoke(context.Background(), tool.def.Adapter, effect.Invocation{
			Args: tool.args, Entry: entry, Turn: effect.TurnContext{Workspace: ws},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !out.IsError || !strings.Contains(out.Content, "disk on fire") {
			t.Fatalf("%s: outcome %q, want the injected failure", tool.def.Name, out.Content)
		}
		if !sawTemp {
			t.Fatalf("%s: no temporary file existed before the rename", tool.def.Name)
		}
		if b, _ := os.ReadFile(p); string(b) != "old content" {
			t.Fatalf("%s: content %q, want the old content", tool.def.Name, b)
		}
		if info, _ := os.Stat(p); info.Mode().Perm() != 0o640 {
			t.Fatalf("%s: mode %v, want 0640", tool.def.Name, info.Mode().Perm())
		}
		if entries, _ := os.ReadDir(ws); len(entries) != 1 {
			t.Fatalf("%s: workspace holds %d entries, want only data.txt", tool.def.Name, len(entries))
		}
	}
}
