package effect

import (
	"path"
	"slices"
)

// riskRank orders risks for a risk ceiling; an unknown risk ranks above
// every known one, so a ceiling drops it.
var riskRank = map[string]int{"low": 0, "medium": 1, "high": 2, "critical": 3}

// ToolPolicy narrows the tools a turn may see and call (the delegated
// child's tool_policy). Deny patterns win; a non-nil
// AllowExact restricts to those names (empty: no tool at all); Allow
// patterns restrict further; MaxRisk drops tools of a higher risk. Patterns
// are shell globs matched against the whole tool name. A nil *ToolPolicy
// allows everything.
//
// The policy is applied twice: Prepare leaves disallowed entries out of the
// catalog, and Execute refuses a call outside it as not found, so a catalog
// built without the policy cannot widen a restricted turn.
type ToolPolicy struct {
	Deny       []string
	AllowExact []string
	Allow      []string
	MaxRisk    string
	// Parent is the policy of the turn that delegated this one: a child
	// never gets a tool its parent could not use, however its own policy
	// reads.
	Parent *ToolPolicy
}

// Allows reports whether a tool of that name and risk passes the policy
// and every policy above it. A malformed deny pattern denies everything.
func (p *ToolPolicy) Allows(name, risk string) bool {
	if p == nil {
		return true
	}
	if !p.Parent.Allows(name, risk) {
		return false
	}
	for _, pat := range p.Deny {
		if ok, err := path.Match(pat, name); ok || err != nil {
			return false
		}
	}
	if p.AllowExact != nil && !slices.Contains(p.AllowExact, name) {
		return false
	}
	if len(p.Allow) > 0 {
		matched := false
		for _, pat := range p.Allow {
			if ok, _ := path.Match(pat, name); ok {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if p.MaxRisk != "" {
		ceiling, ok := riskRank[p.MaxRisk]
		rank, known := riskRank[risk]
		if !ok || !known || rank > ceiling {
			return false
		}
	}
	return true
}
