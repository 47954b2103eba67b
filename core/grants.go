package core

import (
	"maps"
	"slices"
	"sort"
)

// CapabilityGrants returns the capabilities granted to the authored
// component at slotPath (a RelPath such as "agent/input/base_input"): the
// keys of capabilities.defaults, the keys of capabilities.slots[slotPath],
// and the capabilities list of the slot's slot.yaml (or tool's tool.yaml)
// at that path. The result is sorted and de-duplicated. With slotPath ""
// only the defaults are returned.
//
// Note that an authored tool's own `capability` is checked against
// defaults and path grants only: use
// CapabilitySources for that check, not this union.
func (c *Core) CapabilityGrants(slotPath string) []string {
	src := c.CapabilitySources()
	grants := slices.Clone(src.Defaults)
	if slotPath != "" {
		grants = append(grants, src.Paths[slotPath]...)
		grants = append(grants, src.Components[slotPath]...)
	}
	sort.Strings(grants)
	return slices.Compact(grants)
}

// CapabilitySources are the grant sources of a core, kept apart so that a
// capability snapshot can apply the spec's precedence.
type CapabilitySources struct {
	Defaults   []string            // keys of capabilities.defaults, sorted
	Paths      map[string][]string // capabilities.slots: slot path -> sorted keys
	Components map[string][]string // slot or tool RelPath -> its manifest's capabilities, sorted
}

// CapabilitySources returns fresh copies of the core's grant sources.
func (c *Core) CapabilitySources() CapabilitySources {
	src := CapabilitySources{
		Defaults:   slices.Sorted(maps.Keys(c.Manifest.Capabilities.Defaults)),
		Paths:      map[string][]string{},
		Components: map[string][]string{},
	}
	for p, grants := range c.Manifest.Capabilities.Slots {
		src.Paths[p] = slices.Sorted(maps.Keys(grants))
	}
	add := func(rel string, caps []string) {
		if len(caps) == 0 {
			return
		}
		list := slices.Clone(caps)
		sort.Strings(list)
		src.Components[rel] = slices.Compact(list)
	}
	for _, slots := range c.AllSlots {
		for _, s := range slots {
			add(s.RelPath, s.Capabilities)
		}
	}
	for _, t := range c.Tools {
		add(t.RelPath, t.Capabilities)
	}
	return src
}
