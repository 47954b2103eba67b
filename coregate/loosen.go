package coregate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/demiurge/demiurge/core"
)

// Approval configuration is never self-service: an edit that loosens an
// approval policy or grants a capability needs the operator's token. The
// rules below are pure functions of the old and new file contents; they
// are deliberately conservative (a change that might loosen for some
// request counts as loosening).

// ApprovalChange is one loosening an edit makes. Every field is a key
// path, a policy, a risk or a capability name: never a configured value
// that could hold a secret.
type ApprovalChange struct {
	Path   string `json:"path"`   // file, relative to the agents root
	Key    string `json:"key"`    // e.g. approval.default, capabilities.defaults.fs.write
	Before string `json:"before"` // "unset" when absent
	After  string `json:"after"`  // "unset" when absent
	Reason string `json:"reason"`
}

func (c ApprovalChange) String() string {
	return fmt.Sprintf("%s: %s %s -> %s (%s)", c.Path, c.Key, c.Before, c.After, c.Reason)
}

const (
	reasonLoosens   = "loosens approval"
	reasonGrant     = "grants a new capability"
	reasonRisk      = "lowers risk"
	reasonCapChange = "changes the capability a tool requires"
	reasonEnable    = "re-enables a disabled tool"
)

// policyRank orders approval policies; unset ranks below auto (it adds
// no constraint) and an unknown value ranks as deny.
func policyRank(p string) int {
	switch strings.TrimSpace(p) {
	case "":
		return -1
	case "auto":
		return 0
	case "prompt":
		return 1
	default:
		return 2
	}
}

// riskRank orders risks; unknown ranks as critical.
func riskRank(r string) int {
	switch strings.TrimSpace(r) {
	case "":
		return -1
	case "low":
		return 0
	case "medium":
		return 1
	case "high":
		return 2
	default:
		return 3
	}
}

func orUnset(s string) string {
	if strings.TrimSpace(s) == "" {
		return "unset"
	}
	return s
}

// approvalLoosening compares two approval sections. The lookup order of an
// approval section is tools, capabilities, risks, default (first set
// wins), so besides a value moving to a looser policy, a new entry looser
// than some entry it may now shadow loosens, and so does removing an entry
// stricter than auto.
func approvalLoosening(path string, old, new core.ApprovalConfig) []ApprovalChange {
	var out []ApprovalChange
	add := func(key, before, after string) {
		out = append(out, ApprovalChange{Path: path, Key: key, Before: orUnset(before), After: orUnset(after), Reason: reasonLoosens})
	}
	if policyRank(new.Default) < policyRank(old.Default) {
		add("approval.default", old.Default, new.Default)
	}
	sections := []struct {
		name     string
		old, new map[string]string
	}{
		{"tools", old.Tools, new.Tools},
		{"capabilities", old.Capabilities, new.Capabilities},
		{"risks", old.Risks, new.Risks},
	}
	for i, s := range sections {
		// The strictest policy the old config could return below this
		// section: what a new entry here may shadow.
		shadow := policyRank(old.Default)
		for _, lower := range sections[i+1:] {
			for _, v := range lower.old {
				shadow = max(shadow, policyRank(v))
			}
		}
		for _, k := range unionKeys(s.old, s.new) {
			before, had := s.old[k]
			after, has := s.new[k]
			key := "approval." + s.name + "." + k
			switch {
			case had && has && policyRank(after) < policyRank(before):
				add(key, before, after)
			case had && !has && policyRank(before) > 0:
				add(key, before, "")
			case !had && has && policyRank(after) < shadow:
				add(key, "", after)
			}
		}
	}
	return out
}

// unionKeys lists the keys of a and b, sorted, each once.
func unionKeys[V any](a, b map[string]V) []string {
	return slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, m := range []map[string]V{a, b} {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}
	}))
}

// manifestLoosening compares two agent.yaml manifests of one core (old nil
// for a new core): the approval section, capability grants and
// tools.metadata overrides.
func manifestLoosening(path string, old, new *core.Manifest) []ApprovalChange {
	if old == nil {
		old = &core.Manifest{}
	}
	out := approvalLoosening(path, old.Approval, new.Approval)
	for _, c := range slices.Sorted(maps.Keys(new.Capabilities.Defaults)) {
		if _, ok := old.Capabilities.Defaults[c]; !ok {
			out = append(out, ApprovalChange{Path: path, Key: "capabilities.defaults." + c, Before: "unset", After: "granted", Reason: reasonGrant})
		}
	}
	for _, slot := range slices.Sorted(maps.Keys(new.Capabilities.Slots)) {
		for _, c := range slices.Sorted(maps.Keys(new.Capabilities.Slots[slot])) {
			_, inDefaults := old.Capabilities.Defaults[c]
			_, inSlot := old.Capabilities.Slots[slot][c]
			if !inDefaults && !inSlot {
				out = append(out, ApprovalChange{Path: path, Key: "capabilities.slots." + slot + "." + c, Before: "unset", After: "granted", Reason: reasonGrant})
			}
		}
	}
	for _, tool := range unionKeys(old.Tools.Metadata, new.Tools.Metadata) {
		out = append(out, metadataLoosening(path, "tools.metadata."+tool, old.Tools.Metadata[tool], new.Tools.Metadata[tool])...)
	}
	return out
}

// metadataLoosening compares one tools.metadata override. For authored and
// MCP tools an override replaces the tool's own value, so setting a policy
// other than deny, a risk other than critical, or any capability counts.
func metadataLoosening(path, key string, old, new core.ToolMetadata) []ApprovalChange {
	var out []ApprovalChange
	add := func(field, before, after, reason string) {
		out = append(out, ApprovalChange{Path: path, Key: key + "." + field, Before: orUnset(before), After: orUnset(after), Reason: reason})
	}
	switch b, a := old.ApprovalPolicy, new.ApprovalPolicy; {
	case b != "" && policyRank(a) < policyRank(b):
		add("approval_policy", b, a, reasonLoosens)
	case b == "" && a != "" && policyRank(a) < 2:
		add("approval_policy", b, a, reasonLoosens)
	}
	switch b, a := old.Risk, new.Risk; {
	case b != "" && riskRank(a) < riskRank(b):
		add("risk", b, a, reasonRisk)
	case b == "" && a != "" && riskRank(a) < 3:
		add("risk", b, a, reasonRisk)
	}
	if old.Capability != new.Capability {
		add("capability", old.Capability, new.Capability, reasonCapChange)
	}
	if old.Enabled != nil && !*old.Enabled && (new.Enabled == nil || *new.Enabled) {
		after := "unset"
		if new.Enabled != nil {
			after = "true"
		}
		add("enabled", "false", after, reasonEnable)
	}
	return out
}

// componentFile is what approval needs of a tool.yaml, slot.yaml or MCP
// declaration, decoded loosely (other keys are ignored here; the loaders
// check them).
type componentFile struct {
	ApprovalPolicy string
	Risk           string
	Capability     string
	Capabilities   []string
}

func componentFrom(m map[string]any) componentFile {
	var c componentFile
	c.ApprovalPolicy, _ = m["approval_policy"].(string)
	c.Risk, _ = m["risk"].(string)
	c.Capability, _ = m["capability"].(string)
	if list, ok := m["capabilities"].([]any); ok {
		for _, v := range list {
			c.Capabilities = append(c.Capabilities, fmt.Sprint(v))
		}
	}
	return c
}

// componentLoosening compares an authored tool's tool.yaml, a slot.yaml or
// an MCP declaration (old nil when the file is new). defPolicy and
// defRisk are the loader defaults, defCapability the capability an absent
// key means.
func componentLoosening(path string, old, new *componentFile, defPolicy, defRisk, defCapability string) []ApprovalChange {
	var out []ApprovalChange
	add := func(key, before, after, reason string) {
		out = append(out, ApprovalChange{Path: path, Key: key, Before: orUnset(before), After: orUnset(after), Reason: reason})
	}
	isNew := old == nil
	if isNew {
		old = &componentFile{}
	}
	or := func(v, d string) string {
		if strings.TrimSpace(v) == "" {
			return d
		}
		return v
	}
	if defPolicy != "" {
		b, a := or(old.ApprovalPolicy, defPolicy), or(new.ApprovalPolicy, defPolicy)
		if policyRank(a) < policyRank(b) {
			add("approval_policy", b, a, reasonLoosens)
		}
	}
	if defRisk != "" {
		b, a := or(old.Risk, defRisk), or(new.Risk, defRisk)
		if riskRank(a) < riskRank(b) {
			add("risk", b, a, reasonRisk)
		}
	}
	if !isNew {
		b, a := or(old.Capability, defCapability), or(new.Capability, defCapability)
		if b != a {
			add("capability", b, a, reasonCapChange)
		}
	}
	had := map[string]bool{}
	for _, c := range old.Capabilities {
		had[c] = true
	}
	for _, c := range new.Capabilities {
		if !had[c] {
			had[c] = true
			add("capabilities."+c, "", "granted", reasonGrant)
		}
	}
	return out
}
