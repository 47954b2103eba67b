package core_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

func installAll(t *testing.T) string {
	t.Helper()
	agents := filepath.Join(t.TempDir(), "agents")
	if err := core.InstallTemplates(agents, core.TemplateAll, false); err != nil {
		t.Fatal(err)
	}
	return agents
}

func TestAssistantTemplateLoads(t *testing.T) {
	c, err := core.Load(filepath.Join(installAll(t), "assistant"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.ID, "assistant"; got != want {
		t.Fatalf("ID=%q, want %q", got, want)
	}
	if got, want := c.MaxModelSteps, 90; got != want {
		t.Fatalf("MaxModelSteps=%d, want %d", got, want)
	}
	if got, want := strings.Join(c.Manifest.Tools.Toolsets, ","), "coding,demiurge_control,schedule"; got != want {
		t.Fatalf("toolsets=%q, want %q", got, want)
	}
	if got, want := len(c.Builtins), 21; got != want {
		t.Fatalf("%d builtins, want %d", got, want)
	}
	if !strings.Contains(c.Soul, "Demiurge assistant") || strings.Contains(c.Soul, "\n\n\n") {
		t.Fatalf("Soul=%q", c.Soul)
	}
	for _, tt := range []struct{ phase, id, policy string }{
		{core.PhaseBootstrap, "session_context", core.FailureSoft},
		{core.PhaseInput, "base_input", core.FailureHard},
		{core.PhaseOutput, "base_output", core.FailureHard},
	} {
		slots := c.Slots[tt.phase]
		if len(slots) != 1 || slots[0].ID != tt.id {
			t.Fatalf("%s slots=%+v, want [%s]", tt.phase, slots, tt.id)
		}
		sl := slots[0]
		if sl.FailurePolicy != tt.policy || sl.Lane != core.LaneSerial || sl.Function != "process" || sl.TimeoutSeconds != 10 {
			t.Fatalf("%s slot=%+v", tt.id, sl)
		}
		if got, want := sl.RelPath, "agent/"+tt.phase+"/"+tt.id; got != want {
			t.Fatalf("RelPath=%q, want %q", got, want)
		}
		if _, err := os.Stat(sl.ModulePath); err != nil || filepath.Base(sl.ModulePath) != "module.star" {
			t.Fatalf("ModulePath=%q: %v", sl.ModulePath, err)
		}
	}
	if !c.BootstrapEnabled {
		t.Fatal("assistant bootstrap is not enabled")
	}
	echo, ok := c.Tool("echo")
	if !ok {
		t.Fatal("no echo tool")
	}
	if echo.Risk != "low" || echo.ApprovalPolicy != "auto" || echo.Function != "execute" || echo.Capability != "" {
		t.Fatalf("echo=%+v", echo)
	}
	if got, want := echo.Provenance(), "authored:agent/tools/echo"; got != want {
		t.Fatalf("Provenance=%q, want %q", got, want)
	}
	if echo.InputSchema["type"] != "object" {
		t.Fatalf("echo schema=%v", echo.InputSchema)
	}
	if len(c.Skills) != 1 || c.Skills[0].Description == "" {
		t.Fatalf("skills=%+v", c.Skills)
	}
	grants := c.CapabilityGrants("")
	for _, want := range []string{"fs.read", "fs.write", "terminal.exec", "network.fetch", "task.control",
		"agents.spawn:evolver", "session.read", "skill.activate", "schedule.manage", "tool.call:evolve_core", "tool.call:rollback_core"} {
		if !slices.Contains(grants, want) {
			t.Errorf("assistant does not grant %s (grants %v)", want, grants)
		}
	}
	if got, want := c.Manifest.Capabilities.Defaults["fs.write"]["scope"], "workspace"; got != want {
		t.Fatalf("fs.write scope=%v, want %v", got, want)
	}
}

func TestEvolverTemplateLoads(t *testing.T) {
	c, err := core.Load(filepath.Join(installAll(t), "evolver"))
	if err != nil {
		t.Fatal(err)
	}
	if c.BootstrapEnabled || len(c.Slots[core.PhaseBootstrap]) != 0 {
		t.Fatal("evolver has bootstrap slots")
	}
	if len(c.Tools) != 0 {
		t.Fatalf("evolver has authored tools: %+v", c.Tools)
	}
	if got, want := strings.Join(c.Builtins, ","), strings.Join(core.Toolsets["coding"], ","); got != want {
		t.Fatalf("builtins=%q, want %q", got, want)
	}
	for _, name := range []string{"clarify", "session_search", "skill_manage", "todo", "web_extract"} {
		if e := c.Manifest.Tools.Metadata[name].Enabled; e == nil || *e {
			t.Errorf("%s is not disabled", name)
		}
	}
	if got, want := strings.Join(c.CapabilityGrants(""), ","), "fs.read,fs.write,task.control,terminal.exec"; got != want {
		t.Fatalf("grants=%q, want %q", got, want)
	}
	if !strings.Contains(c.Soul, "worktree") {
		t.Fatalf("evolver soul does not describe its job: %q", c.Soul)
	}
}

func TestGlobalTemplateLoads(t *testing.T) {
	g, err := core.LoadGlobal(filepath.Join(installAll(t), "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Model.Provider != "auto" || g.UI.ToolDisplay != "summary" {
		t.Fatalf("global=%+v", g)
	}
}

func TestInstallTemplatesModesAndIdempotence(t *testing.T) {
	agents := installAll(t)
	err := filepath.WalkDir(agents, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700 | fs.ModeDir
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	soul := filepath.Join(agents, "assistant", "agent", "SOUL.md")
	if err := os.WriteFile(soul, []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	removed := filepath.Join(agents, "assistant", "agent", "tools", "echo", "module.star")
	if err := os.Remove(removed); err != nil {
		t.Fatal(err)
	}
	if err := core.InstallTemplates(agents, core.TemplateAssistant, false); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(soul); string(data) != "edited" {
		t.Fatalf("install without overwrite changed SOUL.md: %q", data)
	}
	if _, err := os.Stat(removed); err != nil {
		t.Fatalf("install did not restore a missing file: %v", err)
	}
	if err := core.InstallTemplates(agents, core.TemplateAssistant, true); err != nil {
		t.Fatal(err)
	}
	want, err := fs.ReadFile(core.TemplateFS(), "agents/assistant/agent/SOUL.md")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(soul); string(data) != string(want) {
		t.Fatal("install with overwrite did not restore SOUL.md")
	}
}

func TestInstallTemplatesSelection(t *testing.T) {
	for _, tt := range []struct {
		which string
		want  []string
	}{
		{core.TemplateGlobal, []string{"agent.yaml"}},
		{core.TemplateAssistant, []string{"assistant"}},
		{core.TemplateEvolver, []string{"evolver"}},
		{core.TemplateAll, []string{"agent.yaml", "assistant", "evolver"}},
	} {
		agents := filepath.Join(t.TempDir(), "agents")
		if err := core.InstallTemplates(agents, tt.which, false); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(agents)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s installed %v, want %v", tt.which, got, tt.want)
		}
	}
	if err := core.InstallTemplates(t.TempDir(), "bogus", false); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("err=%v, want EINVALID", err)
	}
}

func TestTemplateFS(t *testing.T) {
	for _, name := range []string{
		"agents/agent.yaml",
		"agents/assistant/agent.yaml",
		"agents/assistant/agent/SOUL.md",
		"agents/assistant/agent/pipelines.yaml",
		"agents/assistant/agent/bootstrap/session_context/module.star",
		"agents/assistant/agent/tools/echo/tool.yaml",
		"agents/evolver/agent/SOUL.md",
	} {
		if _, err := fs.Stat(core.TemplateFS(), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
