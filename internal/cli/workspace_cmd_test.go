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

// A scheduled turn works in its core's runtime.workspace too.
func TestScheduleRunsInCoreRuntimeWorkspace(t *testing.T) {
	h := newHome(t)
	h.ok("init")
	coreWS := filepath.Join(t.TempDir(), "core-ws")
	if err := os.MkdirAll(coreWS, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(coreWS, "probe.txt"), []byte("core-ws-probe"), 0o600); err != nil {
		t.Fatal(err)
	}
	y := string(mustRead(t, filepath.Join(h.dir, "agents", "assistant", "agent.yaml")))
	h.coreFile("assistant/agent.yaml", strings.Replace(y, "  workspace: null\n", "  workspace: "+coreWS+"\n", 1))
	h.writeSchedule("probe", "schedule: \"0 9 * * *\"\nprompt: \"read the probe\"\n")
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`[{"tool_calls":[{"name":"read_file","arguments":{"path":"probe.txt"}}]}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEMIURGE_FAKE_SCRIPT", script)
	var run struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	h.decode(0, &run, "schedules", "run", "probe", "--json")
	if run.Status != "succeeded" {
		t.Fatalf("schedule run %+v", run)
	}
	r := h.ok("tasks", "status", run.RunID, "--json")
	if !strings.Contains(r.stdout, "core-ws-probe") {
		t.Fatalf("the scheduled turn did not read the core's workspace:\n%s", r.stdout)
	}
}
