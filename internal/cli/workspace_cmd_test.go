package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A core's runtime.workspace is where its turns work when neither
// --workspace nor DEMIURGE_WORKSPACE names one; either of those still wins.
func TestCoreRuntimeWorkspace(t *testing.T) {
	h := newHome(t)
	h.ok("init")
	coreWS := filepath.Join(t.TempDir(), "core-ws")
	y := string(mustRead(t, filepath.Join(h.dir, "agents", "assistant", "agent.yaml")))
	h.coreFile("assistant/agent.yaml", strings.Replace(y, "  workspace: null\n", "  workspace: "+coreWS+"\n", 1))
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`[{"tool_calls":[{"name":"write_file","arguments":{"path":"marker.txt","content":"here"}}]},{"content":"done"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEMIURGE_WORKSPACE", "")
	h.ok("run", "--approve", "all", "--fake-script", script, "write it")
	if b, err := os.ReadFile(filepath.Join(coreWS, "marker.txt")); err != nil || string(b) != "here" {
		t.Fatalf("core workspace: %q, %v", b, err)
	}
	h.ok("run", "--approve", "all", "--fake-script", script, "--workspace", h.workspace, "write it")
	if b, err := os.ReadFile(filepath.Join(h.workspace, "marker.txt")); err != nil || string(b) != "here" {
		t.Fatalf("--workspace: %q, %v", b, err)
	}
}
