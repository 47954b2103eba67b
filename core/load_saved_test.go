package core_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/core"
)

// LoadSaved checks what Load checks but does not compile authored input
// schemas again: a schema only compiling would reject still fails Load and
// loads with LoadSaved, and one of the wrong shape fails both.
func TestLoadSavedSkipsSchemaCompile(t *testing.T) {
	agents := t.TempDir()
	if err := core.InstallTemplates(agents, core.TemplateAssistant, false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(agents, "assistant")
	toolYAML := filepath.Join(dir, "agent", "tools", "echo", "tool.yaml")
	write := func(schema string) {
		t.Helper()
		if err := os.WriteFile(toolYAML, []byte("input_schema:\n"+schema), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("  type: object\n  properties:\n    a: {type: 5}\n")
	if _, err := core.Load(dir); err == nil || !strings.Contains(err.Error(), "invalid input_schema") {
		t.Fatalf("Load: %v, want an invalid input_schema", err)
	}
	c, err := core.LoadSaved(dir)
	if err != nil {
		t.Fatalf("LoadSaved: %v", err)
	}
	if len(c.Tools) != 1 || c.Tools[0].InputSchema["type"] != "object" {
		t.Fatalf("tools %+v", c.Tools)
	}
	write("  type: string\n")
	if _, err := core.LoadSaved(dir); err == nil || !strings.Contains(err.Error(), "the top level must have type: object") {
		t.Fatalf("LoadSaved of a string schema: %v", err)
	}
}
