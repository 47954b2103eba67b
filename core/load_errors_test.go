package core_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

const agentYAML = `schema_version: 1
agent:
  id: demo
tools:
  toolsets: [coding]
slots:
  tools: agent/tools
`

const slotKeys = "entrypoint, description, input_schema, capabilities, timeout_seconds, failure_policy, default_placement, history_policy"

func TestLoadErrors(t *testing.T) {
	module := s("def execute(ctx, args):\n    return \"\"\n")
	for _, tt := range []struct {
		name  string
		files map[string]*string
		setup func(t *testing.T, dir string)
		want  string
	}{
		// agent.yaml
		{name: "unknown key in tools", files: map[string]*string{"agent.yaml": s("schema_version: 1\nagent:\n  id: demo\ntools:\n  toolset: [coding]\n")},
			want: `agents/demo/agent.yaml:5: unknown key "toolset" in tools (expected one of: toolsets, metadata)`},
		{name: "unknown top-level key", files: map[string]*string{"agent.yaml": s(agentYAML + "tests:\n  commands: []\n")},
			want: `agents/demo/agent.yaml:8: unknown key "tests" (expected one of: schema_version, agent, runtime, model, ui, channels, slots, tools, approval, capabilities, dependencies)`},
		{name: "duplicate key", files: map[string]*string{"agent.yaml": s(agentYAML + "agent:\n  id: demo\n")},
			want: `agents/demo/agent.yaml:8: duplicate key "agent" (first defined at line 2)`},
		{name: "missing agent.yaml", files: map[string]*string{"agent.yaml": nil},
			want: `missing agent.yaml: agents/demo/agent.yaml`},
		{name: "agent id mismatch", files: map[string]*string{"agent.yaml": s("schema_version: 1\nagent:\n  id: other\n")},
			want: `agents/demo/agent.yaml:3: agent.id "other" does not match the core directory name "demo"`},
		{name: "agent id missing", files: map[string]*string{"agent.yaml": s("schema_version: 1\nagent:\n  summary: x\n")},
			want: `agents/demo/agent.yaml:2: agent.id is required`},
		{name: "schema version", files: map[string]*string{"agent.yaml": s("schema_version: 2\nagent:\n  id: demo\n")},
			want: `agents/demo/agent.yaml:1: schema_version must be 1, got 2`},
		{name: "max model steps", files: map[string]*string{"agent.yaml": s(agentYAML + "runtime:\n  max_model_steps: 91\n")},
			want: `agents/demo/agent.yaml:9: runtime.max_model_steps must be between 1 and 90, got 91`},
		{name: "explicit zero max model steps", files: map[string]*string{"agent.yaml": s(agentYAML + "runtime:\n  max_model_steps: 0\n")},
			want: `agents/demo/agent.yaml:9: runtime.max_model_steps must be between 1 and 90, got 0`},
		{name: "empty surface root", files: map[string]*string{"agent.yaml": s(agentYAML + "runtime:\n  surface_root: \"\"\n")},
			want: `agents/demo/agent.yaml:9: runtime.surface_root must not be empty`},
		{name: "empty workspace", files: map[string]*string{"agent.yaml": s(agentYAML + "runtime:\n  workspace: \" \"\n")},
			want: `agents/demo/agent.yaml:9: runtime.workspace must be null or a non-empty path`},
		{name: "channels not a mapping", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  - telegram\n")},
			want: `agents/demo/agent.yaml:9: invalid value for channels: expected a mapping of channel names to settings`},
		{name: "channel not a mapping", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  telegram: true\n")},
			want: `agents/demo/agent.yaml:9: invalid value for channels.telegram: expected a mapping, got a boolean`},
		{name: "string for integer", files: map[string]*string{"agent.yaml": s(agentYAML + "runtime:\n  max_model_steps: \"ten\"\n")},
			want: `agents/demo/agent.yaml:9: invalid value for runtime.max_model_steps: expected an integer, got a string`},
		{name: "unknown toolsets", files: map[string]*string{"agent.yaml": s("schema_version: 1\nagent:\n  id: demo\ntools:\n  toolsets:\n    - coding\n    - web\n    - admin\n")},
			want: `agents/demo/agent.yaml:7: unknown toolset(s): admin, web`},
		{name: "surface root escapes", files: map[string]*string{"agent.yaml": s(agentYAML + "runtime:\n  surface_root: ../elsewhere\n")},
			want: `agents/demo/agent.yaml:9: invalid runtime.surface_root "../elsewhere": must stay inside the core directory`},
		{name: "slots.tools absolute", files: map[string]*string{"agent.yaml": s("schema_version: 1\nagent:\n  id: demo\nslots:\n  tools: /etc\n")},
			want: `agents/demo/agent.yaml:5: invalid slots.tools "/etc": must be relative to the core directory`},
		{name: "slots.tools symlink out of the core", setup: func(t *testing.T, dir string) {
			outside := t.TempDir()
			if err := os.Symlink(outside, filepath.Join(dir, "agent", "tools")); err != nil {
				t.Fatal(err)
			}
		}, want: `agents/demo/agent.yaml:7: invalid slots.tools "agent/tools": leads outside the core directory through a symbolic link`},
		{name: "slots.soul missing", files: map[string]*string{"agent.yaml": s(agentYAML + "  soul: agent/PROMPT.md\n")},
			want: `agents/demo/agent.yaml:8: slots.soul file not found: agent/PROMPT.md`},
		{name: "capability with a space", files: map[string]*string{"agent.yaml": s(agentYAML + "capabilities:\n  defaults:\n    \"fs read\": {}\n")},
			want: `agents/demo/agent.yaml:10: invalid capability in capabilities.defaults: capability "fs read" contains white space or control characters`},
		{name: "grant options not a mapping", files: map[string]*string{"agent.yaml": s(agentYAML + "capabilities:\n  defaults:\n    fs.read: true\n")},
			want: `agents/demo/agent.yaml:10: invalid value for capabilities.defaults.fs.read: expected a mapping, got a boolean`},
		{name: "approval policy", files: map[string]*string{"agent.yaml": s(agentYAML + "approval:\n  default: ask\n")},
			want: `agents/demo/agent.yaml:9: invalid approval policy for approval.default: "ask" (expected one of: auto, prompt, deny)`},
		{name: "approval risk key", files: map[string]*string{"agent.yaml": s(agentYAML + "approval:\n  risks:\n    severe: deny\n")},
			want: `agents/demo/agent.yaml:10: invalid tool risk in approval.risks: "severe" (expected one of: low, medium, high, critical)`},
		{name: "tool metadata unknown field", files: map[string]*string{"agent.yaml": s("schema_version: 1\nagent:\n  id: demo\ntools:\n  metadata:\n    todo: {enable: false}\n")},
			want: `agents/demo/agent.yaml:6: unknown key "enable" in tools.metadata.todo (expected one of: risk, capability, approval_policy, model_output_policy, display_policy, enabled)`},
		{name: "ui tool display", files: map[string]*string{"agent.yaml": s(agentYAML + "ui:\n  tool_display: loud\n")},
			want: `agents/demo/agent.yaml:9: invalid ui.tool_display "loud" (expected one of: quiet, summary, full)`},
		{name: "dependencies mode", files: map[string]*string{"agent.yaml": s(agentYAML + "dependencies:\n  mode: isolated\n")},
			want: `agents/demo/agent.yaml:9: dependencies.mode must be host_shared, got "isolated"`},
		{name: "known channel type, unknown key", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  matrix:\n    enabled: false\n    room: x\n")},
			want: `agents/demo/agent.yaml:11: unknown key "room" in channels.matrix (expected one of: enabled, type, busy_mode, homeserver_url, access_token_env, access_token, user_id, allowed_rooms, poll_timeout)`},
		{name: "channel busy mode", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  hook:\n    type: webhook\n    busy_mode: later\n")},
			want: `agents/demo/agent.yaml:11: invalid channels.hook.busy_mode: "later" (expected one of: interrupt, queue)`},
		{name: "telegram api base url", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  telegram:\n    api_base_url: ftp://x\n")},
			want: `agents/demo/agent.yaml:10: invalid channels.telegram.api_base_url: "ftp://x" (expected an http or https URL without credentials)`},
		{name: "telegram attachment bound", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  telegram:\n    max_attachment_bytes: 0\n")},
			want: `agents/demo/agent.yaml:10: invalid channels.telegram.max_attachment_bytes: 0 (expected between 1 and 20971520)`},
		{name: "channel port", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  hook:\n    type: webhook\n    port: 70000\n")},
			want: `agents/demo/agent.yaml:11: invalid channels.hook.port: 70000 (expected a port between 1 and 65535)`},
		{name: "channel names collide", files: map[string]*string{"agent.yaml": s(agentYAML + "channels:\n  my-bot: {}\n  My_Bot: {}\n")},
			want: `agents/demo/agent.yaml:10: duplicate channel "my_bot": channels.my-bot and channels.My_Bot name the same channel`},

		// Authored surface and pipelines.
		{name: "missing surface", files: map[string]*string{
			"agent/SOUL.md": nil, "agent/pipelines.yaml": nil,
			"agent/input/base_input/slot.yaml": nil, "agent/input/base_input/module.star": nil,
			"agent/output/base_output/slot.yaml": nil, "agent/output/base_output/module.star": nil,
		}, want: `agents/demo: missing authored surface: agent`},
		{name: "missing pipelines.yaml", files: map[string]*string{"agent/pipelines.yaml": nil},
			want: `agents/demo: missing pipelines.yaml: agent/pipelines.yaml`},
		{name: "unknown pipeline slot", files: map[string]*string{"agent/pipelines.yaml": s("schema_version: 1\ninput:\n  serial: [base_input, nope]\noutput:\n  serial: [base_output]\n")},
			want: `agents/demo/agent/pipelines.yaml:3: unknown input pipeline slot: nope`},
		{name: "duplicate pipeline slot", files: map[string]*string{"agent/pipelines.yaml": s("schema_version: 1\ninput:\n  serial: [base_input]\n  parallel:\n    - base_input\n")},
			want: `agents/demo/agent/pipelines.yaml:5: duplicate input pipeline slot base_input: serial, parallel`},
		{name: "bootstrap parallel", files: map[string]*string{"agent/pipelines.yaml": s("schema_version: 1\nbootstrap:\n  serial: []\n  parallel: []\n")},
			want: `agents/demo/agent/pipelines.yaml:4: bootstrap.parallel is not supported: bootstrap slots run serially (use bootstrap.serial)`},
		{name: "unknown pipeline phase", files: map[string]*string{"agent/pipelines.yaml": s("schema_version: 1\ninputs:\n  serial: []\n")},
			want: `agents/demo/agent/pipelines.yaml:2: unknown key "inputs" (expected one of: schema_version, bootstrap, input, output)`},
		{name: "pipelines without schema_version", files: map[string]*string{"agent/pipelines.yaml": s("input:\n  serial: [base_input]\n")},
			want: `agents/demo/agent/pipelines.yaml: schema_version must be 1 (missing)`},
		{name: "empty pipeline id", files: map[string]*string{"agent/pipelines.yaml": s("schema_version: 1\noutput:\n  parallel: [\"\"]\n")},
			want: `agents/demo/agent/pipelines.yaml:3: output.parallel[0]: slot id must not be empty`},
		{name: "duplicate slot id across phases", files: map[string]*string{
			"agent/output/base_input/slot.yaml": s(""), "agent/output/base_input/module.star": s("def process(ctx):\n    pass\n"),
		}, want: `agents/demo/agent/output/base_input/slot.yaml: duplicate slot id base_input: agent/input/base_input, agent/output/base_input`},
		{name: "invalid slot id", files: map[string]*string{"agent/input/bad id/slot.yaml": s("")},
			want: `agents/demo/agent/input/bad id/slot.yaml: invalid slot id "bad id": use letters, digits, '_' and '-' (at most 64)`},

		// slot.yaml
		{name: "slot.yaml unknown keys", files: map[string]*string{"agent/input/base_input/slot.yaml": s("failure_policy: hard\nrun: x\nfailure: y\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:2: invalid slot.yaml agent/input/base_input/slot.yaml key(s): failure, run (expected one of: ` + slotKeys + `)`},
		{name: "slot failure policy", files: map[string]*string{"agent/input/base_input/slot.yaml": s("failure_policy: fatal\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:1: invalid input module failure_policy for agent/input/base_input: fatal (expected soft or hard)`},
		{name: "slot history policy", files: map[string]*string{"agent/output/base_output/slot.yaml": s("description: d\nhistory_policy: forever\n")},
			want: `agents/demo/agent/output/base_output/slot.yaml:2: invalid output module history_policy for agent/output/base_output: forever (expected one of: persist, model_hidden, transient)`},
		{name: "slot placement", files: map[string]*string{"agent/input/base_input/slot.yaml": s("default_placement: top\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:1: invalid input module default_placement for agent/input/base_input: top (expected one of: pre_current_user, post_current_user)`},
		{name: "slot timeout", files: map[string]*string{"agent/input/base_input/slot.yaml": s("timeout_seconds: 0\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:1: timeout_seconds must be greater than 0 and at most 3600, got 0`},
		{name: "slot capabilities", files: map[string]*string{"agent/input/base_input/slot.yaml": s("capabilities:\n  - fs.read\n  - \"\"\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:3: invalid capabilities[1]: empty capability name`},
		{name: "module missing", files: map[string]*string{"agent/input/base_input/module.star": nil},
			want: `agents/demo/agent/input/base_input/slot.yaml: entrypoint module not found: agent/input/base_input/module.star`},
		{name: "python path entrypoint missing", files: map[string]*string{"agent/input/base_input/slot.yaml": s("entrypoint: module.py:process\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:1: entrypoint module not found: module.py`},
		{name: "entrypoint without function", files: map[string]*string{"agent/input/base_input/slot.yaml": s("entrypoint: process\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:1: invalid entrypoint "process": expected module:function`},
		{name: "entrypoint path escapes", files: map[string]*string{"agent/input/base_input/slot.yaml": s("entrypoint: ../x.star:process\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml:1: invalid entrypoint "../x.star:process": module path must stay inside the core directory`},
		{name: "starlark syntax error", files: map[string]*string{"agent/input/base_input/module.star": s("def process(ctx):\n    pass\ndef broken(ctx)\n    pass\n")},
			want: `agents/demo/agent/input/base_input/module.star:4: Starlark syntax error: got newline, want ':'`},
		{name: "entrypoint function missing", files: map[string]*string{"agent/input/base_input/module.star": s("def other(ctx):\n    pass\n")},
			want: `agents/demo/agent/input/base_input/slot.yaml: entrypoint function process is not defined at the top level of agent/input/base_input/module.star`},

		// Authored tools.
		{name: "tool.yaml unknown key", files: map[string]*string{"agent/tools/echo/tool.yaml": s("risk: low\nenabled: true\n"), "agent/tools/echo/module.star": module},
			want: `agents/demo/agent/tools/echo/tool.yaml:2: invalid tool.yaml agent/tools/echo/tool.yaml key(s): enabled (expected one of: entrypoint, description, input_schema, risk, capability, approval_policy, display_policy, model_output_policy, capabilities)`},
		{name: "tool name collision", files: map[string]*string{"agent/tools/read_file/tool.yaml": s("risk: low\n"), "agent/tools/read_file/module.star": module},
			want: `agents/demo/agent/tools/read_file/tool.yaml: tool name collision: read_file; builtin:read_file conflicts with authored:agent/tools/read_file; rename the authored tool or remove the conflicting builtin toolset`},
		{name: "tool named like a slot", files: map[string]*string{"agent/tools/base_input/tool.yaml": s(""), "agent/tools/base_input/module.star": module},
			want: `agents/demo/agent/tools/base_input/tool.yaml: duplicate slot id base_input: agent/input/base_input, agent/tools/base_input`},
		{name: "tool risk", files: map[string]*string{"agent/tools/echo/tool.yaml": s("risk: extreme\n"), "agent/tools/echo/module.star": module},
			want: `agents/demo/agent/tools/echo/tool.yaml:1: invalid tool risk: extreme (expected one of: low, medium, high, critical)`},
		{name: "tool approval", files: map[string]*string{"agent/tools/echo/tool.yaml": s("description: x\napproval_policy: maybe\n"), "agent/tools/echo/module.star": module},
			want: `agents/demo/agent/tools/echo/tool.yaml:2: invalid approval policy: maybe (expected one of: auto, prompt, deny)`},
		{name: "tool schema not an object", files: map[string]*string{"agent/tools/echo/tool.yaml": s("input_schema:\n  type: string\n"), "agent/tools/echo/module.star": module},
			want: `agents/demo/agent/tools/echo/tool.yaml:1: invalid input_schema: the top level must have type: object`},
		{name: "tool schema external ref", files: map[string]*string{"agent/tools/echo/tool.yaml": s("input_schema:\n  type: object\n  properties:\n    a: {$ref: \"file:///etc/passwd\"}\n"), "agent/tools/echo/module.star": module},
			want: `agents/demo/agent/tools/echo/tool.yaml:1: invalid input_schema: failing loading "file:///etc/passwd": external schema references are not allowed`},
		{name: "tool module missing", files: map[string]*string{"agent/tools/echo/tool.yaml": s("risk: low\n")},
			want: `agents/demo/agent/tools/echo/tool.yaml: entrypoint module not found: agent/tools/echo/module.star`},
		{name: "tool default function missing", files: map[string]*string{"agent/tools/echo/tool.yaml": s("risk: low\n"), "agent/tools/echo/module.star": s("def process(ctx):\n    pass\n")},
			want: `agents/demo/agent/tools/echo/tool.yaml: entrypoint function execute is not defined at the top level of agent/tools/echo/module.star`},

		// Skills.
		{name: "duplicate skill", files: map[string]*string{
			"agent/skills/a.md":             s("---\nname: b\n---\nBody.\n"),
			"agent/skills/tools/b/SKILL.md": s("# B\n"),
		}, want: `agents/demo/agent/skills/tools/b/SKILL.md: duplicate skill id b: agent/skills/a.md, agent/skills/tools/b/SKILL.md`},
		{name: "skill frontmatter type", files: map[string]*string{"agent/skills/a.md": s("---\ndescription: ok\nname: [x]\n---\nBody.\n")},
			want: `agents/demo/agent/skills/a.md:3: invalid skill frontmatter name: expected a string`},
		{name: "skill frontmatter duplicate key", files: map[string]*string{"agent/skills/a.md": s("---\nname: a\nname: b\n---\n")},
			want: `agents/demo/agent/skills/a.md:3: duplicate key "name" (first defined at line 2)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeCore(t, tt.files)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			before := snapshot(t, filepath.Dir(dir))
			c, err := core.Load(dir)
			if err == nil {
				t.Fatalf("Load succeeded (%s), want an error", c.ID)
			}
			if got, want := demiurge.ErrorCode(err), demiurge.ECONFIG; got != want {
				t.Fatalf("code=%q (%v), want %q", got, err, want)
			}
			if got := demiurge.ErrorMessage(err); got != tt.want {
				t.Fatalf("message:\n got %s\nwant %s", got, tt.want)
			}
			if !sameSnapshot(before, snapshot(t, filepath.Dir(dir))) {
				t.Fatal("a failed Load changed files on disk")
			}
		})
	}
}

func TestLoadErrorNamesFullPathOutsideAgentsDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("schema_version: 1\nagent:\n  id: demo\nbogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := core.Load(dir)
	want := filepath.ToSlash(dir) + `/agent.yaml:4: unknown key "bogus" (expected one of: schema_version, agent, runtime, model, ui, channels, slots, tools, approval, capabilities, dependencies)`
	if got := demiurge.ErrorMessage(err); got != want {
		t.Fatalf("message:\n got %s\nwant %s", got, want)
	}
}
