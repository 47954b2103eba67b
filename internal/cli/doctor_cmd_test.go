package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctor(t *testing.T) {
	h := newHome(t)
	r := h.ok("doctor")
	for _, want := range []string{"home: " + h.dir + "\n", "database: ok (schema version ", "core repository: consistent ", "core assistant: ok\n", "core evolver: ok\n", "active tasks: 0\n", "sandbox: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.HasSuffix(r.stdout, "\nok\n") {
		t.Fatalf("a healthy doctor ends with ok:\n%s", r.stdout)
	}
	var rep struct {
		CoreID   string `json:"core_id"`
		OK       bool   `json:"ok"`
		Findings []struct {
			Code string `json:"code"`
		} `json:"findings"`
	}
	if h.decode(0, &rep, "doctor", "--json"); !rep.OK || rep.CoreID != "assistant" || len(rep.Findings) != 0 {
		t.Fatalf("doctor --json = %+v", rep)
	}

	// Findings exit 1: a core that does not load, a core that is missing.
	if err := os.WriteFile(filepath.Join(h.dir, "agents", "evolver", "agent.yaml"), []byte("bogus_key: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = h.run("", "--core", "no_such_core", "doctor")
	for _, want := range []string{"core evolver: fails to load\n", "error core.load_failed: ", "error core.missing: core \"no_such_core\" has no agent.yaml", "\n2 problem(s) found\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 1 || r.stderr != "" {
		t.Fatalf("unhealthy doctor: exit %d stderr %q", r.code, r.stderr)
	}
	if h.decode(1, &rep, "--core", "no_such_core", "doctor", "--json"); rep.OK || len(rep.Findings) != 2 || rep.Findings[1].Code != "core.missing" {
		t.Fatalf("doctor --json = %+v", rep)
	}
}

// core check exits 1 on findings and --repair fixes what it can.
func TestCoreCheckAndRepair(t *testing.T) {
	h := newHome(t)
	h.ok("run", "hello")
	if err := os.Remove(filepath.Join(h.dir, "runtime", "core.git", "demiurge", "checkout")); err != nil {
		t.Fatal(err)
	}
	r := h.run("", "core", "check")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "core.checkout_head_missing: ") || r.stderr != "" {
		t.Fatalf("core check: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := h.ok("core", "check", "--repair"); r.stdout != "repair ran\ncore repository is consistent\n" {
		t.Fatalf("core check --repair: %q", r.stdout)
	}
}
