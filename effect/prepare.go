package effect

import (
	"cmp"

	"github.com/demiurge/demiurge/policy"
)

// Sources are the inputs of one turn's catalog, in catalog order: builtins
// (the selected toolsets), authored tools, then MCP tools (the extension
// point later sources register into).
type Sources struct {
	CoreID   string
	Revision string
	Builtins []Definition
	Authored []Definition
	MCP      []Definition
	// Metadata is agent.yaml tools.metadata, keyed by tool name. For
	// builtins it can only tighten; for authored and MCP tools it replaces.
	Metadata map[string]policy.Override
	// CoreApproval and GlobalApproval are folded into every entry's policy;
	// they can only make it stricter.
	CoreApproval   policy.ApprovalConfig
	GlobalApproval policy.ApprovalConfig
	// ToolPolicy leaves out the tools a delegated turn may not use (nil:
	// none is left out). Collisions are still checked across every source.
	ToolPolicy *ToolPolicy
}

// Prepare resolves the catalog of one turn:
// metadata overrides, approval folding, disabled entries dropped, argument
// schemas compiled, and every name checked for a collision across sources.
func Prepare(src Sources) (*Catalog, error) {
	defs := make([]Definition, 0, len(src.Builtins)+len(src.Authored)+len(src.MCP))
	for _, d := range src.Builtins {
		if d, ok := resolve(d, src, policy.TightenBuiltin); ok {
			defs = append(defs, d)
		}
	}
	for _, group := range [][]Definition{src.Authored, src.MCP} {
		for _, d := range group {
			if d, ok := resolve(d, src, replaceOverride); ok {
				defs = append(defs, d)
			}
		}
	}
	if src.ToolPolicy == nil {
		return NewCatalog(src.CoreID, src.Revision, defs)
	}
	// A name collision fails the turn even when the policy would hide one
	// of the two tools: the catalog is broken either way.
	if _, err := NewCatalog(src.CoreID, src.Revision, defs); err != nil {
		return nil, err
	}
	kept := defs[:0]
	for _, d := range defs {
		if src.ToolPolicy.Allows(d.Name, d.Risk) {
			kept = append(kept, d)
		}
	}
	return NewCatalog(src.CoreID, src.Revision, kept)
}

// resolve applies the metadata override and the approval fold to d and
// reports whether the entry stays enabled.
func resolve(d Definition, src Sources, apply func(policy.EntryPolicy, policy.Override) policy.EntryPolicy) (Definition, bool) {
	ep := policy.EntryPolicy{
		Risk: policy.Risk(cmp.Or(d.Risk, "low")), Capability: d.Capability,
		ApprovalPolicy:    policy.Policy(cmp.Or(d.ApprovalPolicy, ApprovalAuto)),
		ModelOutputPolicy: d.ModelOutputPolicy, DisplayPolicy: d.DisplayPolicy, Enabled: true,
	}
	if o, ok := src.Metadata[d.Name]; ok {
		ep = apply(ep, o)
	}
	if !ep.Enabled {
		return d, false
	}
	d.Risk, d.Capability = string(ep.Risk), ep.Capability
	d.ModelOutputPolicy, d.DisplayPolicy = ep.ModelOutputPolicy, ep.DisplayPolicy
	d.ApprovalPolicy = string(policy.Fold(ep.ApprovalPolicy, d.Name, ep.Capability, string(ep.Risk), src.CoreApproval, src.GlobalApproval))
	return d, true
}

// replaceOverride applies an override to an authored or MCP entry: the
// core's author owns those entries, so every given field replaces.
func replaceOverride(base policy.EntryPolicy, o policy.Override) policy.EntryPolicy {
	out := base
	if o.Risk != nil && *o.Risk != "" {
		out.Risk = policy.Risk(*o.Risk)
	}
	if o.Capability != nil {
		out.Capability = *o.Capability
	}
	if o.ApprovalPolicy != nil && *o.ApprovalPolicy != "" {
		out.ApprovalPolicy = policy.Policy(*o.ApprovalPolicy)
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
