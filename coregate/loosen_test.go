package coregate

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge/core"
)

func keysOf(cs []ApprovalChange) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Key+"="+c.Before+">"+c.After)
	}
	return strings.Join(out, " ")
}

func TestApprovalLoosening(t *testing.T) {
	type cfg = core.ApprovalConfig
	cases := []struct {
		name     string
		old, new cfg
		want     string
	}{
		{"unchanged", cfg{Default: "prompt"}, cfg{Default: "prompt"}, ""},
		{"tighten default", cfg{Default: "auto"}, cfg{Default: "deny"}, ""},
		{"set default from unset", cfg{}, cfg{Default: "auto"}, ""},
		{"loosen default", cfg{Default: "deny"}, cfg{Default: "prompt"}, "approval.default=deny>prompt"},
		{"unset default", cfg{Default: "prompt"}, cfg{}, "approval.default=prompt>unset"},
		{"loosen tool", cfg{Tools: map[string]string{"terminal": "prompt"}}, cfg{Tools: map[string]string{"terminal": "auto"}}, "approval.tools.terminal=prompt>auto"},
		{"remove strict tool", cfg{Tools: map[string]string{"terminal": "deny"}}, cfg{}, "approval.tools.terminal=deny>unset"},
		{"remove auto tool", cfg{Tools: map[string]string{"terminal": "auto"}}, cfg{}, ""},
		{"new entry shadows stricter default", cfg{Default: "deny"}, cfg{Default: "deny", Tools: map[string]string{"x": "prompt"}}, "approval.tools.x=unset>prompt"},
		{"new entry shadows stricter risk", cfg{Risks: map[string]string{"high": "deny"}}, cfg{Risks: map[string]string{"high": "deny"}, Capabilities: map[string]string{"fs.write": "auto"}}, "approval.capabilities.fs.write=unset>auto"},
		{"new strict entry", cfg{Default: "prompt"}, cfg{Default: "prompt", Tools: map[string]string{"x": "deny"}}, ""},
		{"new risk entry below nothing", cfg{}, cfg{Risks: map[string]string{"low": "auto"}}, ""},
		{"invalid counts as deny", cfg{Default: "bogus"}, cfg{Default: "prompt"}, "approval.default=bogus>prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := keysOf(approvalLoosening("a.yaml", tc.old, tc.new)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestManifestLoosening(t *testing.T) {
	f, tr := false, true
	grants := func(caps ...string) map[string]core.GrantOptions {
		m := map[string]core.GrantOptions{}
		for _, c := range caps {
			m[c] = nil
		}
		return m
	}
	cases := []struct {
		name     string
		old, new *core.Manifest
		want     string
	}{
		{"new grant", &core.Manifest{Capabilities: core.CapabilityConfig{Defaults: grants("fs.read")}},
			&core.Manifest{Capabilities: core.CapabilityConfig{Defaults: grants("fs.read", "terminal.exec")}},
			"capabilities.defaults.terminal.exec=unset>granted"},
		{"removed grant", &core.Manifest{Capabilities: core.CapabilityConfig{Defaults: grants("fs.read", "x")}},
			&core.Manifest{Capabilities: core.CapabilityConfig{Defaults: grants("fs.read")}}, ""},
		{"slot grant already a default", &core.Manifest{Capabilities: core.CapabilityConfig{Defaults: grants("fs.read")}},
			&core.Manifest{Capabilities: core.CapabilityConfig{Slots: map[string]map[string]core.GrantOptions{"agent/input/a": grants("fs.read")}}}, ""},
		{"new slot grant", &core.Manifest{},
			&core.Manifest{Capabilities: core.CapabilityConfig{Slots: map[string]map[string]core.GrantOptions{"agent/input/a": grants("network.fetch")}}},
			"capabilities.slots.agent/input/a.network.fetch=unset>granted"},
		{"new core", nil, &core.Manifest{Capabilities: core.CapabilityConfig{Defaults: grants("fs.read")}},
			"capabilities.defaults.fs.read=unset>granted"},
		{"metadata lowers risk and policy", &core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Risk: "high", ApprovalPolicy: "prompt"}}}},
			&core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Risk: "low", ApprovalPolicy: "auto"}}}},
			"tools.metadata.t.approval_policy=prompt>auto tools.metadata.t.risk=high>low"},
		{"metadata tightens", &core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Risk: "low"}}}},
			&core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Risk: "high", ApprovalPolicy: "deny"}}}}, ""},
		{"metadata re-enables", &core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Enabled: &f}}}},
			&core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Enabled: &tr}}}},
			"tools.metadata.t.enabled=false>true"},
		{"metadata capability swap", &core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Capability: "fs.write"}}}},
			&core.Manifest{Tools: core.ToolsConfig{Metadata: map[string]core.ToolMetadata{"t": {Capability: "fs.read"}}}},
			"tools.metadata.t.capability=fs.write>fs.read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := keysOf(manifestLoosening("c/agent.yaml", tc.old, tc.new)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestComponentLoosening(t *testing.T) {
	cf := func(policy, risk, capability string, caps ...string) *componentFile {
		return &componentFile{ApprovalPolicy: policy, Risk: risk, Capability: capability, Capabilities: caps}
	}
	cases := []struct {
		name     string
		old, new *componentFile
		def      [3]string
		want     string
	}{
		{"new tool with defaults", nil, cf("", "", ""), [3]string{"prompt", "medium", ""}, ""},
		{"new tool auto", nil, cf("auto", "", ""), [3]string{"prompt", "medium", ""}, "approval_policy=prompt>auto"},
		{"new tool low risk", nil, cf("", "low", ""), [3]string{"prompt", "medium", ""}, "risk=medium>low"},
		{"tool grant", cf("", "", "", "fs.read"), cf("", "", "", "fs.read", "fs.write"), [3]string{"prompt", "medium", ""}, "capabilities.fs.write=unset>granted"},
		{"tool capability removed", cf("", "", "fs.write"), cf("", "", ""), [3]string{"prompt", "medium", ""}, "capability=fs.write>unset"},
		{"mcp capability from default", cf("", "", ""), cf("", "", "other"), [3]string{"prompt", "medium", "mcp.call:s"}, "capability=mcp.call:s>other"},
		{"mcp tighten", cf("prompt", "medium", ""), cf("deny", "high", ""), [3]string{"prompt", "medium", "mcp.call:s"}, ""},
		{"slot grant", cf("", "", ""), cf("", "", "", "terminal.exec"), [3]string{"", "", ""}, "capabilities.terminal.exec=unset>granted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := keysOf(componentLoosening("p", tc.old, tc.new, tc.def[0], tc.def[1], tc.def[2]))
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRules(t *testing.T) {
	cases := []struct {
		path                string
		artifact, dep, name bool
		cleanable           bool
	}{
		{"assistant/agent/SOUL.md", false, false, false, false},
		{"assistant/agent/__pycache__/m.pyc", true, false, false, true},
		{"assistant/x.pyo", true, false, false, true},
		{"assistant/agent/node_modules/a/b.js", true, false, false, false},
		{"runtime/state.json", true, false, false, true},
		{"assistant/runtime/state.json", false, false, false, false},
		{"assistant/package.json", false, true, false, false},
		{"assistant/requirements-dev.txt", false, true, false, false},
		{"assistant/Cargo.toml", false, true, false, false},
		{"assistant/.git/HEAD", false, false, true, false},
		{"assistant/a\nb", false, false, true, false},
	}
	for _, tc := range cases {
		if got := artifactReason(tc.path) != ""; got != tc.artifact {
			t.Errorf("artifact(%q) = %v", tc.path, got)
		}
		if got := dependencyReason(tc.path) != ""; got != tc.dep {
			t.Errorf("dependency(%q) = %v", tc.path, got)
		}
		if got := nameReason(tc.path) != ""; got != tc.name {
			t.Errorf("name(%q) = %v", tc.path, got)
		}
		if got := CleanableArtifact(tc.path); got != tc.cleanable {
			t.Errorf("cleanable(%q) = %v", tc.path, got)
		}
	}
}

func TestRedactArgsAndURL(t *testing.T) {
	args := redactArgs([]string{"serve", "--token=abcd1234efgh", "--api-key", "k-123456789", "--port", "80"})
	joined := strings.Join(args, " ")
	if strings.Contains(joined, "abcd1234efgh") || strings.Contains(joined, "k-123456789") || !strings.Contains(joined, "--port 80") {
		t.Fatalf("args = %q", joined)
	}
	if got := urlSummary("https://user:pw@example.com:8443/mcp?key=secret&x=1"); got != "https://example.com:8443/mcp?key&x" {
		t.Fatalf("url = %q", got)
	}
}
