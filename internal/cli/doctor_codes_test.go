package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type doctorOut struct {
	OK       bool     `json:"ok"`
	Repaired []string `json:"repaired"`
	Counts   struct {
		Warning int `json:"warning"`
		Error   int `json:"error"`
	} `json:"counts"`
	Findings []struct {
		Severity string         `json:"severity"`
		Code     string         `json:"code"`
		Message  string         `json:"message"`
		Details  map[string]any `json:"details"`
	} `json:"findings"`
}

func (d doctorOut) codes() []string {
	var c []string
	for _, f := range d.Findings {
		c = append(c, f.Severity+" "+f.Code)
	}
	slices.Sort(c)
	return c
}

func TestDoctorFindsInsecurePermissionsAndRepairs(t *testing.T) {
	h := newHome(t)
	h.ok("init")
	env := filepath.Join(h.dir, ".env")
	cfg := filepath.Join(h.dir, "config.yaml")
	if err := os.WriteFile(env, []byte("# keys\nOPENAI_API_KEY="+testKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(env, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cfg, 0o664); err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, cfg)
	var rep doctorOut
	r := h.decode(1, &rep, "doctor", "--json")
	noSecret(t, r)
	if got, want := rep.codes(), []string{"error runtime.permissions.insecure"}; !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
	if m := rep.Findings[0].Message; !strings.Contains(m, env) || !strings.Contains(m, cfg) {
		t.Fatalf("finding does not name the files: %s", m)
	}
	h.decode(0, &rep, "doctor", "--repair", "--json")
	if !rep.OK || len(rep.Repaired) != 2 {
		t.Fatalf("repair: %+v", rep)
	}
	for p, want := range map[string]os.FileMode{env: 0o600, cfg: 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	if after := mustRead(t, cfg); string(after) != string(before) {
		t.Fatal("repair changed config.yaml's content")
	}
	if s := string(mustRead(t, env)); s != "# keys\nOPENAI_API_KEY="+testKey+"\n" {
		t.Fatalf("repair changed .env: %q", s)
	}
	// A .env line that is not KEY=value is a finding naming the line.
	if err := os.WriteFile(env, []byte("OPENAI_API_KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.decode(1, &rep, "doctor", "--json")
	if got := rep.codes(); !slices.Equal(got, []string{"error runtime.env.invalid"}) || !strings.Contains(rep.Findings[0].Message, ".env:1: invalid .env line 1") {
		t.Fatalf("bad .env: %+v", rep)
	}
}

func TestDoctorProviderEnvMissing(t *testing.T) {
	h := newHome(t)
	h.ok("setup", "providers", "set-default", "deepseek")
	h.ok("setup", "providers", "add", "local", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "LOCAL_LLM_KEY")
	var rep doctorOut
	h.decode(0, &rep, "doctor", "--json")
	if got, want := rep.codes(), []string{"warning provider.env_missing", "warning provider.env_missing"}; !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
	if !rep.OK || !strings.Contains(rep.Findings[0].Message+rep.Findings[1].Message, "DEEPSEEK_API_KEY") {
		t.Fatalf("report %+v", rep)
	}
	// A key in .env satisfies it; an unconfigured builtin is not reported.
	h.ok("setup", "providers", "add", "deepseek", "--api-key", testKey, "--write-env")
	t.Setenv("LOCAL_LLM_KEY", "sk-local-0000000000")
	h.decode(0, &rep, "doctor", "--json")
	if len(rep.Findings) != 0 {
		t.Fatalf("findings %v", rep.codes())
	}
}

func TestDoctorAndInitCheckReportTemplateDrift(t *testing.T) {
	h := newHome(t)
	h.ok("init")
	y := string(mustRead(t, filepath.Join(h.dir, "agents", "assistant", "agent.yaml")))
	y = strings.Replace(y, "    - schedule\n", "", 1)
	y = strings.Replace(y, "  mcp: agent/mcp\n", "", 1)
	h.coreFile("assistant/agent.yaml", y)
	if err := os.Remove(filepath.Join(h.dir, "agents", "assistant", "agent", "skills", "debugging.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(h.dir, "agents", "assistant", "agent", "output", "base_output")); err != nil {
		t.Fatal(err)
	}
	h.coreFile("assistant/agent/pipelines.yaml", "schema_version: 1\nbootstrap:\n  serial: [session_context]\ninput:\n  serial: [base_input]\n  parallel: []\noutput:\n  serial: []\n  parallel: []\n")
	ev := string(mustRead(t, filepath.Join(h.dir, "agents", "evolver", "agent.yaml")))
	h.coreFile("evolver/agent.yaml", strings.Replace(ev, "    - coding\n", "    - coding\n    - schedule\n", 1))
	g := string(mustRead(t, filepath.Join(h.dir, "agents", "agent.yaml")))
	h.coreFile("agent.yaml", g[:strings.Index(g, "ui:")]+g[strings.Index(g, "approval:"):])
	want := []string{
		"warning core.output.missing_slots", "warning core.skills.missing", "warning core.slots.missing_keys",
		"warning core.tools.extra", "warning core.tools.missing", "warning global_config.missing_fields",
	}
	var rep doctorOut
	h.decode(0, &rep, "doctor", "--json")
	if got := rep.codes(); !slices.Equal(got, want) {
		t.Fatalf("doctor codes %v, want %v", got, want)
	}
	for _, f := range rep.Findings {
		if f.Code == "core.tools.missing" && !strings.Contains(f.Message, "schedule_manage") {
			t.Errorf("core.tools.missing does not name the tool: %s", f.Message)
		}
	}
	var ini doctorOut
	h.decode(0, &ini, "init", "--check", "--json")
	if got := ini.codes(); !slices.Equal(got, want) || !ini.OK {
		t.Fatalf("init --check codes %v, want %v", got, want)
	}
	if r := h.ok("init", "--check"); !strings.Contains(r.stdout, "warning core.skills.missing: core assistant lacks the skills debugging") {
		t.Fatalf("init --check:\n%s", r.stdout)
	}
	// A core that no longer loads: init --check cannot check (exit 2).
	h.coreFile("evolver/agent.yaml", "bogus: 1\n")
	wantOneLine(t, h.run("", "init", "--check"), 2, "agents/evolver/agent.yaml")
}
