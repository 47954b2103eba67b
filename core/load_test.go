package core_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

func mustLoad(t *testing.T, files map[string]*string) *core.Core {
	t.Helper()
	c, err := core.Load(writeCore(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func slotIDs(slots []core.Slot) string {
	var out []string
	for _, s := range slots {
		out = append(out, s.ID+"/"+s.Lane)
	}
	return strings.Join(out, ",")
}

func TestPipelineOrderAndLanes(t *testing.T) {
	mod := s("def process(ctx):\n    pass\n")
	c := mustLoad(t, map[string]*string{
		"agent/pipelines.yaml":       s("schema_version: 1\ninput:\n  serial: [b_in, base_input]\n  parallel: [a_in]\noutput:\n  parallel: [base_output]\n"),
		"agent/input/a_in/slot.yaml": s("timeout_seconds: 2.5\nhistory_policy: transient\n"), "agent/input/a_in/module.star": mod,
		"agent/input/b_in/slot.yaml":        s("entrypoint: lib.helpers:run\ndefault_placement: post_current_user\n"),
		"agent/input/b_in/lib/helpers.star": s("def run(ctx):\n    pass\n"),
		"agent/input/unlisted/slot.yaml":    s(""), "agent/input/unlisted/module.star": mod,
		"agent/input/not_a_slot/README.md": s("no slot.yaml here\n"),
	})
	if got, want := slotIDs(c.Slots[core.PhaseInput]), "b_in/serial,base_input/serial,a_in/parallel"; got != want {
		t.Fatalf("input pipeline=%s, want %s", got, want)
	}
	if got, want := slotIDs(c.Slots[core.PhaseOutput]), "base_output/parallel"; got != want {
		t.Fatalf("output pipeline=%s, want %s", got, want)
	}
	if got, want := slotIDs(c.AllSlots[core.PhaseInput]), "a_in/,b_in/,base_input/,unlisted/"; got != want {
		t.Fatalf("all input slots=%s, want %s", got, want)
	}
	if c.BootstrapEnabled {
		t.Fatal("bootstrap enabled without bootstrap slots")
	}
	a, _ := c.Slot(core.PhaseInput, "a_in")
	if a.TimeoutSeconds != 2.5 || a.Timeout().Milliseconds() != 2500 || a.HistoryPolicy != core.HistoryTransient || a.FailurePolicy != core.FailureSoft {
		t.Fatalf("a_in=%+v", a)
	}
	b, _ := c.Slot(core.PhaseInput, "b_in")
	if b.Function != "run" || !strings.HasSuffix(filepath.ToSlash(b.ModulePath), "agent/input/b_in/lib/helpers.star") || b.DefaultPlacement != core.PlacementPostCurrentUser {
		t.Fatalf("b_in=%+v", b)
	}
	if u, ok := c.Slot(core.PhaseInput, "unlisted"); !ok || u.Lane != "" {
		t.Fatalf("unlisted=%+v ok=%v", u, ok)
	}
	if _, ok := c.Slot(core.PhaseOutput, "base_input"); ok {
		t.Fatal("Slot found an input slot under output")
	}
}

func TestCoreRelativeEntrypoint(t *testing.T) {
	c := mustLoad(t, map[string]*string{
		"agent/input/base_input/slot.yaml": s("entrypoint: agent/lib/shared.star:handle\n"),
		"agent/lib/shared.star":            s("def _impl(ctx):\n    pass\nhandle = _impl\n"),
	})
	sl, _ := c.Slot(core.PhaseInput, "base_input")
	if got, want := c.RelPath(sl.ModulePath), "agent/lib/shared.star"; got != want || sl.Function != "handle" {
		t.Fatalf("module=%q function=%q, want %q handle", got, sl.Function, want)
	}
}

func TestSkillsIndex(t *testing.T) {
	c := mustLoad(t, map[string]*string{
		"agent/skills/debugging.md":                        s("---\nname: debug\ndescription: Find bugs.\ncategory: engineering\nversion: 2\n---\n# Debugging\n"),
		"agent/skills/plain.md":                            s("\n# Plain skill\n\nBody.\n"),
		"agent/skills/devops/deploy/SKILL.md":              s("---\ndescription: Ship it.\n---\nSteps.\n"),
		"agent/skills/devops/deploy/references/runbook.md": s("runbook"),
		"agent/skills/devops/deploy/scripts/go.sh":         s("echo"),
		"agent/skills/devops/deploy/scripts/.hidden":       s("x"),
		"agent/skills/review/SKILL.md":                     s("Review carefully.\n"),
		"agent/skills/.drafts/wip/SKILL.md":                s("hidden"),
		"agent/skills/notes.txt":                           s("not a skill"),
	})
	var got []string
	for _, sk := range c.Skills {
		got = append(got, strings.Join([]string{sk.ID, sk.Name, sk.Category, sk.Description, sk.RelPath}, "|"))
	}
	want := []string{
		"debugging|debug|engineering|Find bugs.|agent/skills/debugging.md",
		"deploy|deploy|devops|Ship it.|agent/skills/devops/deploy/SKILL.md",
		"plain|plain|general|Plain skill|agent/skills/plain.md",
		"review|review|general|Review carefully.|agent/skills/review/SKILL.md",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("skills:\n got %q\nwant %q", got, want)
	}
	deploy, ok := c.Skill("deploy")
	if !ok || !deploy.Packaged {
		t.Fatalf("deploy=%+v", deploy)
	}
	if got, want := deploy.LinkedFiles["references"], []string{"references/runbook.md"}; !slices.Equal(got, want) {
		t.Fatalf("references=%q, want %q", got, want)
	}
	if got, want := deploy.LinkedFiles["scripts"], []string{"scripts/go.sh"}; !slices.Equal(got, want) {
		t.Fatalf("scripts=%q, want %q", got, want)
	}
	if dbg, ok := c.Skill("debug"); !ok || dbg.ID != "debugging" || dbg.Packaged || !strings.HasPrefix(dbg.Content, "---\n") {
		t.Fatalf("lookup by name: %+v ok=%v", dbg, ok)
	}
}

func TestOpenSectionsAndChannels(t *testing.T) {
	c := mustLoad(t, map[string]*string{"agent.yaml": s(agentYAML + `  input: agent/input
  future_root: whatever
capabilities:
  defaults:
    fs.read: {scope: workspace, max_chars_per_call: 20000}
    "mcp.connect:docs": {}
    secret.bind:GITHUB_TOKEN:
  slots:
    agent/input/base_input:
      state.session.write: {note: [any, shape]}
dependencies:
  mode: host_shared
  pinned: [a, b]
channels:
  Chat-Ops:
    type: irc
    enabled: true
    server: irc.example.org
    rooms: ["#ops"]
  telegram:
    allowed_users: [42]
  hook:
    type: webhook
    enabled: true
    path: inbox
`)})
	if got, want := c.Manifest.Slots.Tools, "agent/tools"; got != want {
		t.Fatalf("slots.tools=%q, want %q", got, want)
	}
	if got, want := strings.Join(c.CapabilityGrants(""), ","), "fs.read,mcp.connect:docs,secret.bind:GITHUB_TOKEN"; got != want {
		t.Fatalf("defaults=%q, want %q", got, want)
	}
	irc := c.Manifest.Channels["chat_ops"]
	if irc.Type != "irc" || !irc.Enabled || irc.Settings.(map[string]any)["server"] != "irc.example.org" {
		t.Fatalf("chat_ops=%+v", irc)
	}
	tg, ok := c.Manifest.Channels["telegram"].Settings.(*core.TelegramChannel)
	if !ok || c.Manifest.Channels["telegram"].Enabled || !slices.Equal(tg.AllowedUsers, []int64{42}) || tg.PollTimeout != 30 || tg.MessageFormat != "markdown_v2" ||
		tg.APIBaseURL != "https://api.telegram.org" || tg.BusyMode != "" {
		t.Fatalf("telegram=%+v", c.Manifest.Channels["telegram"])
	}
	hook := c.Manifest.Channels["hook"].Settings.(*core.WebhookChannel)
	if !c.Manifest.Channels["hook"].Enabled || !hook.Enabled || hook.Path != "/inbox" || hook.Port != 8765 || hook.BusyMode != "" {
		t.Fatalf("hook=%+v", hook)
	}
}

func TestCapabilityGrants(t *testing.T) {
	c := mustLoad(t, map[string]*string{
		"agent.yaml": s(agentYAML + `capabilities:
  defaults:
    fs.read: {}
    task.control: {}
  slots:
    agent/input/base_input:
      state.session.write: {}
      fs.read: {}
    agent/tools/echo:
      network.fetch: {}
`),
		"agent/input/base_input/slot.yaml": s("capabilities: [tool.call:echo, skill.activate]\n"),
		"agent/tools/echo/tool.yaml":       s("capability: tool.call:echo\ncapabilities: [fs.write]\n"),
		"agent/tools/echo/module.star":     s("def execute(ctx, args):\n    return args.get(\"text\", \"\")\n"),
	})
	for _, tt := range []struct{ path, want string }{
		{"", "fs.read,task.control"},
		{"agent/input/base_input", "fs.read,skill.activate,state.session.write,task.control,tool.call:echo"},
		{"agent/output/base_output", "fs.read,task.control"},
		{"agent/tools/echo", "fs.read,fs.write,network.fetch,task.control"},
		{"agent/input/missing", "fs.read,task.control"},
	} {
		if got := strings.Join(c.CapabilityGrants(tt.path), ","); got != tt.want {
			t.Errorf("CapabilityGrants(%q)=%q, want %q", tt.path, got, tt.want)
		}
	}
	src := c.CapabilitySources()
	if got, want := strings.Join(src.Components["agent/tools/echo"], ","), "fs.write"; got != want {
		t.Fatalf("tool components=%q, want %q", got, want)
	}
	if got, want := strings.Join(src.Paths["agent/tools/echo"], ","), "network.fetch"; got != want {
		t.Fatalf("tool path grants=%q, want %q", got, want)
	}
	// The result is a copy: changing it changes nothing.
	src.Defaults[0] = "everything"
	if c.CapabilityGrants("")[0] != "fs.read" {
		t.Fatal("CapabilitySources shares memory with the core")
	}
}

func TestSoulAndWorkspace(t *testing.T) {
	c := mustLoad(t, map[string]*string{
		"agent.yaml":      s(agentYAML + "  soul: agent/extra.md\nruntime:\n  workspace: ../work\n"),
		"agent/extra.md":  s("\n  Extra rules.  \n"),
		"agent/SOUL.md":   s("Main prompt.\n\n"),
		"agent/unused.md": s("never read"),
	})
	if got, want := c.Soul, "Extra rules.\n\nMain prompt."; got != want {
		t.Fatalf("Soul=%q, want %q", got, want)
	}
	if got, want := c.Workspace(), filepath.Join(filepath.Dir(c.Dir), "work"); got != want {
		t.Fatalf("Workspace=%q, want %q", got, want)
	}
	same := mustLoad(t, map[string]*string{"agent.yaml": s(agentYAML + "  soul: agent/./SOUL.md\n")})
	if got, want := same.Soul, "You are demo."; got != want {
		t.Fatalf("deduplicated Soul=%q, want %q", got, want)
	}
	if same.Workspace() != "" {
		t.Fatalf("Workspace=%q without runtime.workspace", same.Workspace())
	}
}

func TestNoAuthoredToolsWithoutSlotsTools(t *testing.T) {
	c := mustLoad(t, map[string]*string{
		"agent.yaml":                   s("schema_version: 1\nagent:\n  id: demo\n"),
		"agent/tools/echo/tool.yaml":   s("risk: bogus\n"), // never read
		"agent/tools/echo/module.star": s("syntax error here"),
	})
	if len(c.Tools) != 0 || c.ToolsDir() != "" {
		t.Fatalf("tools=%+v dir=%q", c.Tools, c.ToolsDir())
	}
	if got, want := c.SkillsDir(), filepath.Join(c.Dir, "agent", "skills"); got != want {
		t.Fatalf("SkillsDir=%q, want %q", got, want)
	}
}

func TestLoadGlobal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	for _, tt := range []struct {
		name, content, want string
	}{
		{"other key", "model:\n  provider: fake\ntools:\n  toolsets: [coding]\n",
			`agents/agent.yaml:3: unknown key "tools": the global fallback config may only set model, ui, approval`},
		{"nested unknown key", "model:\n  base_url: x\n",
			`agents/agent.yaml:2: unknown key "base_url" in model (expected one of: provider, model_name, model_options, context_window)`},
		{"bad policy", "approval:\n  tools:\n    terminal: never\n",
			`agents/agent.yaml:3: invalid approval policy for approval.tools.terminal: "never" (expected one of: auto, prompt, deny)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "agent.yaml")
			writeFile(t, p, tt.content)
			_, err := core.LoadGlobal(p)
			if got := demiurge.ErrorMessage(err); got != tt.want || demiurge.ErrorCode(err) != demiurge.ECONFIG {
				t.Fatalf("err=%v (%s)\nwant %s", got, demiurge.ErrorCode(err), tt.want)
			}
		})
	}
	g, err := core.LoadGlobal(filepath.Join(t.TempDir(), "agent.yaml"))
	if err != nil || g.Model.Provider != "" {
		t.Fatalf("missing fallback: %+v, %v", g, err)
	}
}

func TestModelContextWindow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents")
	p := filepath.Join(dir, "agent.yaml")
	writeFile(t, p, "model:\n  provider: fake\n  context_window: 0\n")
	_, err := core.LoadGlobal(p)
	if want := "agents/agent.yaml:3: model.context_window must be at least 1024 tokens, got 0"; demiurge.ErrorMessage(err) != want || demiurge.ErrorCode(err) != demiurge.ECONFIG {
		t.Fatalf("err %v, want %q", err, want)
	}
	writeFile(t, p, "model:\n  provider: fake\n  context_window: 8192\n")
	g, err := core.LoadGlobal(p)
	if err != nil || g.Model.ContextWindow != 8192 {
		t.Fatalf("window %d, err %v", g.Model.ContextWindow, err)
	}
}
