package core

import (
	"cmp"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/demiurge/demiurge/internal/yamlx"
)

// Manifest is agent.yaml as decoded, with defaults
// applied by Load. Unknown keys are rejected everywhere except inside slots
// (ignored), the option maps of capability grants, dependencies, and
// channels of unknown types.
type Manifest struct {
	SchemaVersion int              `yaml:"schema_version"` // always 1
	Agent         AgentInfo        `yaml:"agent"`
	Runtime       RuntimeConfig    `yaml:"runtime"`
	Model         ModelConfig      `yaml:"model"`
	UI            UIConfig         `yaml:"ui"`
	Channels      Channels         `yaml:"channels"`
	Slots         SlotRoots        `yaml:"slots" yamlx:"open"`
	Tools         ToolsConfig      `yaml:"tools"`
	Approval      ApprovalConfig   `yaml:"approval"`
	Capabilities  CapabilityConfig `yaml:"capabilities"`
	Dependencies  DependencyConfig `yaml:"dependencies" yamlx:"open"`
}

// AgentInfo is agent.yaml's agent section.
type AgentInfo struct {
	ID      string `yaml:"id"` // required; equals the core directory name
	Summary string `yaml:"summary"`
}

// RuntimeConfig is agent.yaml's runtime section.
type RuntimeConfig struct {
	SurfaceRoot   string  `yaml:"surface_root"`    // core-relative, default "agent"
	MaxModelSteps int     `yaml:"max_model_steps"` // 1..90, default 90
	Workspace     *string `yaml:"workspace"`       // nil, or a non-empty path (relative to the core directory)
}

// ModelConfig is the model section of agent.yaml and of the global fallback.
type ModelConfig struct {
	Provider     string         `yaml:"provider"`   // "" (unset), auto, fake or a profile id
	ModelName    string         `yaml:"model_name"` // "" when unset
	ModelOptions map[string]any `yaml:"model_options"`
	// ContextWindow overrides the provider profile's context window, in
	// tokens (0: the profile's).
	ContextWindow int `yaml:"context_window"`
}

// MinContextWindow is the smallest model.context_window a core may
// declare: below it not even a system prompt and one message fit.
const MinContextWindow = 1024

// UIConfig is the ui section of agent.yaml and of the global fallback.
type UIConfig struct {
	ToolDisplay string `yaml:"tool_display"` // "" (unset), quiet, summary or full
}

// SlotRoots is agent.yaml's slots section: core-relative roots of authored
// components. Keys it does not declare are ignored.
type SlotRoots struct {
	Soul      string `yaml:"soul"`      // an extra prompt file joined after <surface>/SOUL.md
	Tools     string `yaml:"tools"`     // no default: without it the core has no authored tools
	Skills    string `yaml:"skills"`    // default <surface>/skills
	Schedules string `yaml:"schedules"` // default <surface>/schedules
	MCP       string `yaml:"mcp"`       // default <surface>/mcp
}

// ToolsConfig is agent.yaml's tools section.
type ToolsConfig struct {
	Toolsets []string                `yaml:"toolsets"` // names from Toolsets
	Metadata map[string]ToolMetadata `yaml:"metadata"` // per tool name
}

// ToolMetadata overrides a tool's registry metadata; "" and nil mean "keep".
type ToolMetadata struct {
	Risk              string `yaml:"risk"`
	Capability        string `yaml:"capability"`
	ApprovalPolicy    string `yaml:"approval_policy"`
	ModelOutputPolicy string `yaml:"model_output_policy"`
	DisplayPolicy     string `yaml:"display_policy"`
	Enabled           *bool  `yaml:"enabled"`
}

// ApprovalConfig is the approval section of agent.yaml and of the global
// fallback. Every policy is auto, prompt or deny; Default may be "".
type ApprovalConfig struct {
	Default      string            `yaml:"default"`
	Tools        map[string]string `yaml:"tools"`        // tool name -> policy
	Capabilities map[string]string `yaml:"capabilities"` // capability -> policy
	Risks        map[string]string `yaml:"risks"`        // risk -> policy
}

// CapabilityConfig is agent.yaml's capabilities section. Only the keys of
// the grant maps count; their option values are kept but never interpreted.
type CapabilityConfig struct {
	Defaults map[string]GrantOptions            `yaml:"defaults"` // core-wide grants
	Slots    map[string]map[string]GrantOptions `yaml:"slots"`    // slot path -> grants
}

// GrantOptions are the ignored options of one capability grant.
type GrantOptions map[string]any

// DependencyConfig is agent.yaml's dependencies section.
type DependencyConfig struct {
	Mode                        string `yaml:"mode"` // only host_shared
	AllowAdditionalDependencies bool   `yaml:"allow_additional_dependencies"`
}

var (
	risks            = []string{"low", "medium", "high", "critical"}
	approvalPolicies = []string{"auto", "prompt", "deny"}
	toolDisplays     = []string{"quiet", "summary", "full"}
)

// applyDefaults fills what agent.yaml may leave out.
func (m *Manifest) applyDefaults() {
	if m.SchemaVersion == 0 {
		m.SchemaVersion = 1
	}
	m.Runtime.SurfaceRoot = cmp.Or(m.Runtime.SurfaceRoot, "agent")
	if m.Runtime.MaxModelSteps == 0 {
		m.Runtime.MaxModelSteps = DefaultMaxModelSteps
	}
	m.Dependencies.Mode = cmp.Or(m.Dependencies.Mode, "host_shared")
}

// validate checks the values of a decoded agent.yaml, before defaults are
// applied (so that an explicit zero is told from an absent key); dirName is
// the name of the core directory. Lines come from doc.
func (m *Manifest) validate(doc *yamlx.Document, dirName string) error {
	if doc.Has("schema_version") && m.SchemaVersion != 1 {
		return doc.Errorf(doc.Line("schema_version"), "schema_version must be 1, got %d", m.SchemaVersion)
	}
	switch id := m.Agent.ID; {
	case strings.TrimSpace(id) == "":
		return doc.Errorf(cmp.Or(doc.Line("agent", "id"), doc.Line("agent")), "agent.id is required")
	case !ValidID(id):
		return doc.Errorf(doc.Line("agent", "id"), "invalid agent.id %q: use letters, digits, '_' and '-' (at most 64)", id)
	case id != dirName:
		return doc.Errorf(doc.Line("agent", "id"), "agent.id %q does not match the core directory name %q", id, dirName)
	}
	if doc.Has("runtime", "max_model_steps") && (m.Runtime.MaxModelSteps < 1 || m.Runtime.MaxModelSteps > MaxModelStepsLimit) {
		return doc.Errorf(doc.Line("runtime", "max_model_steps"), "runtime.max_model_steps must be between 1 and %d, got %d", MaxModelStepsLimit, m.Runtime.MaxModelSteps)
	}
	if doc.Has("runtime", "surface_root") && strings.TrimSpace(m.Runtime.SurfaceRoot) == "" {
		return doc.Errorf(doc.Line("runtime", "surface_root"), "runtime.surface_root must not be empty")
	}
	if w := m.Runtime.Workspace; w != nil && strings.TrimSpace(*w) == "" {
		return doc.Errorf(doc.Line("runtime", "workspace"), "runtime.workspace must be null or a non-empty path")
	}
	if err := validateModel(doc, m.Model); err != nil {
		return err
	}
	if err := validateUI(doc, m.UI); err != nil {
		return err
	}
	if err := m.validateTools(doc); err != nil {
		return err
	}
	if err := validateApproval(doc, m.Approval); err != nil {
		return err
	}
	if err := m.validateCapabilities(doc); err != nil {
		return err
	}
	if m.Dependencies.Mode != "" && m.Dependencies.Mode != "host_shared" {
		return doc.Errorf(doc.Line("dependencies", "mode"), "dependencies.mode must be host_shared, got %q", m.Dependencies.Mode)
	}
	return nil
}

func validateModel(doc *yamlx.Document, m ModelConfig) error {
	if doc.Has("model", "provider") && m.Provider != "" && strings.TrimSpace(m.Provider) != m.Provider {
		return doc.Errorf(doc.Line("model", "provider"), "model.provider %q has surrounding spaces", m.Provider)
	}
	if doc.Has("model", "context_window") && m.ContextWindow < MinContextWindow {
		return doc.Errorf(doc.Line("model", "context_window"), "model.context_window must be at least %d tokens, got %d", MinContextWindow, m.ContextWindow)
	}
	return nil
}

func validateUI(doc *yamlx.Document, u UIConfig) error {
	if u.ToolDisplay != "" && !slices.Contains(toolDisplays, u.ToolDisplay) {
		return doc.Errorf(doc.Line("ui", "tool_display"), "invalid ui.tool_display %q (expected one of: %s)", u.ToolDisplay, strings.Join(toolDisplays, ", "))
	}
	return nil
}

func (m *Manifest) validateTools(doc *yamlx.Document) error {
	var unknown []string
	line := 0
	for i, name := range m.Tools.Toolsets {
		if _, ok := Toolsets[name]; !ok {
			unknown = append(unknown, name)
			line = cmp.Or(line, doc.Line("tools", "toolsets", itoa(i)))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		unknown = slices.Compact(unknown)
		return doc.Errorf(line, "unknown toolset(s): %s", strings.Join(unknown, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(m.Tools.Metadata)) {
		md := m.Tools.Metadata[name]
		at := func(key string) int {
			return cmp.Or(doc.Line("tools", "metadata", name, key), doc.Line("tools", "metadata", name))
		}
		if md.Risk != "" && !slices.Contains(risks, md.Risk) {
			return doc.Errorf(at("risk"), "invalid tool risk for tools.metadata.%s: %q (expected one of: %s)", name, md.Risk, strings.Join(risks, ", "))
		}
		if md.ApprovalPolicy != "" && !slices.Contains(approvalPolicies, md.ApprovalPolicy) {
			return doc.Errorf(at("approval_policy"), "invalid approval policy for tools.metadata.%s: %q (expected one of: %s)", name, md.ApprovalPolicy, strings.Join(approvalPolicies, ", "))
		}
		if md.Capability != "" {
			if err := checkCapability(md.Capability); err != "" {
				return doc.Errorf(at("capability"), "invalid capability for tools.metadata.%s: %s", name, err)
			}
		}
		if md.ModelOutputPolicy != "" && !validPolicyWord(md.ModelOutputPolicy) {
			return doc.Errorf(at("model_output_policy"), "invalid model_output_policy for tools.metadata.%s: %q", name, md.ModelOutputPolicy)
		}
		if md.DisplayPolicy != "" && !validPolicyWord(md.DisplayPolicy) {
			return doc.Errorf(at("display_policy"), "invalid display_policy for tools.metadata.%s: %q", name, md.DisplayPolicy)
		}
	}
	return nil
}

// validateApproval checks an approval section (agent.yaml or the fallback).
func validateApproval(doc *yamlx.Document, a ApprovalConfig) error {
	want := strings.Join(approvalPolicies, ", ")
	if a.Default != "" && !slices.Contains(approvalPolicies, a.Default) {
		return doc.Errorf(doc.Line("approval", "default"), "invalid approval policy for approval.default: %q (expected one of: %s)", a.Default, want)
	}
	for _, section := range []struct {
		name string
		m    map[string]string
	}{{"tools", a.Tools}, {"capabilities", a.Capabilities}, {"risks", a.Risks}} {
		for _, k := range slices.Sorted(maps.Keys(section.m)) {
			if p := section.m[k]; !slices.Contains(approvalPolicies, p) {
				return doc.Errorf(doc.Line("approval", section.name, k), "invalid approval policy for approval.%s.%s: %q (expected one of: %s)", section.name, k, p, want)
			}
			if section.name == "risks" && !slices.Contains(risks, k) {
				return doc.Errorf(doc.Line("approval", "risks", k), "invalid tool risk in approval.risks: %q (expected one of: %s)", k, strings.Join(risks, ", "))
			}
		}
	}
	return nil
}

func (m *Manifest) validateCapabilities(doc *yamlx.Document) error {
	for _, c := range slices.Sorted(maps.Keys(m.Capabilities.Defaults)) {
		if err := checkCapability(c); err != "" {
			return doc.Errorf(doc.Line("capabilities", "defaults", c), "invalid capability in capabilities.defaults: %s", err)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(m.Capabilities.Slots)) {
		if !validSlotPath(p) {
			return doc.Errorf(doc.Line("capabilities", "slots", p), "invalid slot path in capabilities.slots: %q (expected a core-relative path such as agent/input/base_input)", p)
		}
		for _, c := range slices.Sorted(maps.Keys(m.Capabilities.Slots[p])) {
			if err := checkCapability(c); err != "" {
				return doc.Errorf(doc.Line("capabilities", "slots", p, c), "invalid capability in capabilities.slots.%s: %s", p, err)
			}
		}
	}
	return nil
}

// checkCapability returns why c is not a usable capability name, or "".
// Capabilities are opaque strings; only the blatantly broken are refused.
func checkCapability(c string) string {
	if c == "" {
		return "empty capability name"
	}
	for _, r := range c {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "capability " + quoteShort(c) + " contains white space or control characters"
		}
	}
	return ""
}

func validSlotPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") || path.Clean(p) != p {
		return false
	}
	return p != "." && p != ".." && !strings.HasPrefix(p, "../")
}
