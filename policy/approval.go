package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
)

// Policy is an approval policy. The order auto < prompt < deny is the order
// of strictness; configuration folds with Stricter and so can only tighten.
//
// Any value other than the three constants is treated as Deny wherever a
// decision is made (fail closed); ParsePolicy and ApprovalConfig.Validate
// report such values as configuration errors at load time.
type Policy string

// Approval policies, loosest first.
const (
	Auto   Policy = "auto"
	Prompt Policy = "prompt"
	Deny   Policy = "deny"
)

// ParsePolicy parses an approval policy. Surrounding space is ignored; case
// is not (agent.yaml is written in lowercase). The error names the value and
// the allowed ones, and carries ECONFIG.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(strings.TrimSpace(s))
	if !p.Valid() {
		return "", demiurge.Errorf(demiurge.ECONFIG,
			"invalid approval policy: %s (allowed: auto, prompt, deny)", quoteIfEmpty(s))
	}
	return p, nil
}

// Valid reports whether p is one of Auto, Prompt or Deny.
func (p Policy) Valid() bool { return p == Auto || p == Prompt || p == Deny }

// rank orders policies; an invalid policy ranks as Deny.
func (p Policy) rank() int {
	switch p {
	case Auto:
		return 0
	case Prompt:
		return 1
	default:
		return 2
	}
}

// Stricter returns the stricter of a and b. An invalid policy counts as
// Deny, so Stricter never returns a policy looser than either argument.
func Stricter(a, b Policy) Policy {
	if !a.Valid() || !b.Valid() {
		return Deny
	}
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// orDeny returns p when valid and Deny otherwise.
func (p Policy) orDeny() Policy {
	if p.Valid() {
		return p
	}
	return Deny
}

// Risk is a tool risk level, ordered low < medium < high < critical. An
// invalid risk compares as Critical wherever it is ranked (fail closed).
type Risk string

// Risk levels, lowest first.
const (
	RiskLow      Risk = "low"
	RiskMedium   Risk = "medium"
	RiskHigh     Risk = "high"
	RiskCritical Risk = "critical"
)

// ParseRisk parses a risk level. The error names the value and the allowed
// ones, and carries ECONFIG.
func ParseRisk(s string) (Risk, error) {
	r := Risk(strings.TrimSpace(s))
	if !r.Valid() {
		return "", demiurge.Errorf(demiurge.ECONFIG,
			"invalid tool risk: %s (allowed: low, medium, high, critical)", quoteIfEmpty(s))
	}
	return r, nil
}

// Valid reports whether r is one of the four risk levels.
func (r Risk) Valid() bool {
	return r == RiskLow || r == RiskMedium || r == RiskHigh || r == RiskCritical
}

func (r Risk) rank() int {
	switch r {
	case RiskLow:
		return 0
	case RiskMedium:
		return 1
	case RiskHigh:
		return 2
	default:
		return 3
	}
}

// Compare returns -1, 0 or +1 as r is lower than, equal to or higher than o.
// Invalid levels rank as Critical.
func (r Risk) Compare(o Risk) int {
	switch a, b := r.rank(), o.rank(); {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// orCritical returns r when valid and RiskCritical otherwise.
func (r Risk) orCritical() Risk {
	if r.Valid() {
		return r
	}
	return RiskCritical
}

func quoteIfEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return `""`
	}
	return s
}

// ApprovalConfig is the `approval:` block of an agent.yaml (the core's own,
// and the global fallback agents/agent.yaml). Values are policy names; an
// empty value means "not set" (YAML null).
type ApprovalConfig struct {
	Default      string
	Tools        map[string]string // tool name → policy
	Capabilities map[string]string // capability → policy
	Risks        map[string]string // risk level → policy
}

// Select returns the policy this one config assigns to a request, "" when it
// assigns none. The first non-empty of tools[tool], capabilities[capability],
// risks[risk] and default wins: it is a lookup order, not a strictness fold.
func (c ApprovalConfig) Select(tool, capability, risk string) string {
	if v := strings.TrimSpace(c.Tools[tool]); v != "" && tool != "" {
		return v
	}
	if v := strings.TrimSpace(c.Capabilities[capability]); v != "" && capability != "" {
		return v
	}
	if v := strings.TrimSpace(c.Risks[risk]); v != "" && risk != "" {
		return v
	}
	return strings.TrimSpace(c.Default)
}

// Validate reports the first invalid value of c, naming its key path under
// `approval:` (keys are visited in sorted order so the report is stable). A
// risks key must itself be a risk level.
func (c ApprovalConfig) Validate() error {
	check := func(path, v string) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		if _, err := ParsePolicy(v); err != nil {
			return demiurge.WrapError(demiurge.ECONFIG, err, "approval.%s: %s", path, demiurge.ErrorMessage(err))
		}
		return nil
	}
	if err := check("default", c.Default); err != nil {
		return err
	}
	for _, group := range []struct {
		name string
		m    map[string]string
	}{{"tools", c.Tools}, {"capabilities", c.Capabilities}, {"risks", c.Risks}} {
		for _, k := range slices.Sorted(maps.Keys(group.m)) {
			if group.name == "risks" {
				if _, err := ParseRisk(k); err != nil {
					return demiurge.WrapError(demiurge.ECONFIG, err, "approval.risks: %s", demiurge.ErrorMessage(err))
				}
			}
			if err := check(group.name+"."+k, group.m[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Fold is the catalog-time approval fold: starting
// from the registry (entry) policy, for the core config then the global one,
// and for each of the entry's capability and "tool.call:<tool>" (de-duplicated,
// empty skipped), the policy becomes Stricter(policy, Select(...)). Config can
// therefore only tighten: an `auto` in either config never lowers a registry
// prompt or deny.
//
// An invalid registry policy or configured value folds as Deny (fail closed);
// configs should have been checked with Validate when they were loaded.
func Fold(registry Policy, tool, capability, risk string, core, global ApprovalConfig) Policy {
	p := registry.orDeny()
	caps := make([]string, 0, 2)
	for _, c := range []string{capability, "tool.call:" + tool} {
		if c != "" && c != "tool.call:" && (len(caps) == 0 || caps[0] != c) {
			caps = append(caps, c)
		}
	}
	if len(caps) == 0 {
		caps = append(caps, "") // still apply tools/risks/default
	}
	for _, cfg := range []ApprovalConfig{core, global} {
		for _, c := range caps {
			if v := cfg.Select(tool, c, risk); v != "" {
				p = Stricter(p, Policy(v).orDeny())
			}
		}
	}
	return p
}

// EntryPolicy is the policy-relevant metadata of one catalog entry.
type EntryPolicy struct {
	Risk              Risk
	Capability        string
	ApprovalPolicy    Policy
	ModelOutputPolicy string
	DisplayPolicy     string
	Enabled           bool
}

// Override is one `tools.metadata.<name>` block of agent.yaml. A nil field
// is not set.
type Override struct {
	Risk              *string
	Capability        *string
	ApprovalPolicy    *string
	ModelOutputPolicy *string
	DisplayPolicy     *string
	Enabled           *bool
}

// Validate reports an invalid risk or approval_policy of o, naming the tool.
func (o Override) Validate(tool string) error {
	if o.Risk != nil {
		if _, err := ParseRisk(*o.Risk); err != nil {
			return demiurge.WrapError(demiurge.ECONFIG, err, "tools.metadata.%s.risk: %s", tool, demiurge.ErrorMessage(err))
		}
	}
	if o.ApprovalPolicy != nil {
		if _, err := ParsePolicy(*o.ApprovalPolicy); err != nil {
			return demiurge.WrapError(demiurge.ECONFIG, err, "tools.metadata.%s.approval_policy: %s", tool, demiurge.ErrorMessage(err))
		}
	}
	return nil
}

// TightenBuiltin applies a tools.metadata override to a builtin's registry
// metadata: risk and approval_policy are
// applied only when they are at least as strict as the registry's, so core
// configuration cannot loosen a builtin. model_output_policy, display_policy
// and enabled are applied as given. capability may be replaced by another
// non-empty capability but never removed: an empty value would turn the
// capability gate off, which is a loosening.
//
// An invalid risk counts as critical and an invalid approval_policy as deny
// (fail closed); Override.Validate reports both at load time.
func TightenBuiltin(base EntryPolicy, o Override) EntryPolicy {
	out := base
	if o.Risk != nil {
		if r := Risk(strings.TrimSpace(*o.Risk)).orCritical(); r.Compare(base.Risk) >= 0 {
			out.Risk = r
		}
	}
	if o.ApprovalPolicy != nil {
		out.ApprovalPolicy = Stricter(base.ApprovalPolicy, Policy(strings.TrimSpace(*o.ApprovalPolicy)).orDeny())
	}
	if o.Capability != nil && strings.TrimSpace(*o.Capability) != "" {
		out.Capability = strings.TrimSpace(*o.Capability)
	}
	if o.ModelOutputPolicy != nil && *o.ModelOutputPolicy != "" {
		out.ModelOutputPolicy = *o.ModelOutputPolicy
	}
	if o.DisplayPolicy != nil && *o.DisplayPolicy != "" {
		out.DisplayPolicy = *o.DisplayPolicy
	}
	if o.Enabled != nil {
		out.Enabled = *o.Enabled
	}
	return out
}

// Fingerprint returns a stable digest (hex SHA-256) of the snapshot's grant
// keys: the defaults and every path's grants, sorted. Two snapshots with the
// same grants have the same fingerprint; the approval cache binds to it so a
// grant change asks the operator again.
func (g Grants) Fingerprint() string {
	type pathGrants struct {
		Path   string   `json:"path"`
		Grants []string `json:"grants"`
	}
	paths := make([]pathGrants, 0, len(g.paths))
	for p, caps := range g.paths {
		paths = append(paths, pathGrants{Path: p, Grants: sortedGrants(caps)})
	}
	sort.Slice(paths, func(i, j int) bool { return paths[i].Path < paths[j].Path })
	// Marshalling strings and slices of strings cannot fail.
	raw, _ := json.Marshal(struct {
		Defaults []string     `json:"defaults"`
		Paths    []pathGrants `json:"paths"`
	}{sortedGrants(g.defaults), paths})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// sortedGrants returns the keys of a grant set sorted and never nil: an
// empty set marshals as [], as it always has, so fingerprints recorded with
// earlier approvals still match.
func sortedGrants(set map[string]struct{}) []string {
	return append([]string{}, slices.Sorted(maps.Keys(set))...)
}
