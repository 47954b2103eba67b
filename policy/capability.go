package policy

import (
	"sort"
	"strings"
)

// Grants is an immutable capability snapshot pinned at turn admission:
// core-wide defaults plus per-component grants keyed by slot or tool path
// (e.g. "agent/input/base_input"). Only grant keys count; option values in
// agent.yaml are never read.
type Grants struct {
	defaults map[string]struct{}
	paths    map[string]map[string]struct{}
}

// NewGrants builds a snapshot. The maps are copied.
func NewGrants(defaults []string, paths map[string][]string) Grants {
	g := Grants{defaults: set(defaults), paths: make(map[string]map[string]struct{}, len(paths))}
	for p, caps := range paths {
		g.paths[p] = set(caps)
	}
	return g
}

func set(caps []string) map[string]struct{} {
	m := make(map[string]struct{}, len(caps))
	for _, c := range caps {
		if c = strings.TrimSpace(c); c != "" {
			m[c] = struct{}{}
		}
	}
	return m
}

// Can reports whether capability is granted for slotPath: by the path's own
// grants, then by the defaults. An empty slotPath consults the defaults only.
func (g Grants) Can(capability, slotPath string) bool {
	if slotPath != "" && matchAny(g.paths[slotPath], capability) {
		return true
	}
	return matchAny(g.defaults, capability)
}

// CanExact reports whether capability is a literal key of the defaults. It is
// used for grants that must never come from a wildcard (secret.bind:<NAME>).
func (g Grants) CanExact(capability string) bool {
	_, ok := g.defaults[capability]
	return ok
}

// Defaults returns the sorted default grant keys.
func (g Grants) Defaults() []string {
	out := make([]string, 0, len(g.defaults))
	for c := range g.defaults {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func matchAny(grants map[string]struct{}, capability string) bool {
	if len(grants) == 0 || capability == "" {
		return false
	}
	if _, ok := grants[capability]; ok {
		return true
	}
	for _, w := range Wildcards(capability) {
		if _, ok := grants[w]; ok {
			return true
		}
	}
	return false
}

// Wildcards returns the colon-prefix wildcards that grant capability: for
// "a:b:c" they are "a:b:*" and "a:*". There is no bare "*", no dot wildcard,
// and a wildcard never grants its bare prefix ("mcp.call:*" does not grant
// "mcp.call").
func Wildcards(capability string) []string {
	var out []string
	for i := len(capability) - 1; i >= 0; i-- {
		if capability[i] == ':' {
			out = append(out, capability[:i+1]+"*")
		}
	}
	return out
}
