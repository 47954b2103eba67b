package effect

import (
	"fmt"
	"slices"
	"sync"

	"github.com/demiurge/demiurge"
)

// Catalog is the immutable per-turn set of callable entries.
type Catalog struct {
	coreID   string
	revision string
	entries  []*Entry
	byName   map[string]*Entry
	defs     func() []demiurge.ToolSpec // made once: a catalog serves every step of many turns
	derived  sync.Map                   // key → value made by Derived
}

// NewCatalog binds defs to one core revision. A name defined twice fails with
// an error naming both provenances.
func NewCatalog(coreID, revision string, defs []Definition) (*Catalog, error) {
	c := &Catalog{coreID: coreID, revision: revision, byName: make(map[string]*Entry, len(defs))}
	for _, d := range defs {
		e, err := d.Bind(coreID, revision)
		if err != nil {
			return nil, demiurge.WrapError(demiurge.ECONFIG, err, "tool %s (%s): invalid input schema: %v", d.Name, d.Provenance, err)
		}
		if prev, ok := c.byName[e.Name]; ok {
			return nil, demiurge.Errorf(demiurge.ECONFIG,
				"tool name collision: %s; %s conflicts with %s; rename the authored or MCP tool",
				e.Name, prev.Provenance, e.Provenance)
		}
		c.byName[e.Name] = e
		c.entries = append(c.entries, e)
	}
	c.defs = sync.OnceValue(func() []demiurge.ToolSpec {
		out := make([]demiurge.ToolSpec, 0, len(c.entries))
		for _, e := range c.entries {
			out = append(out, demiurge.ToolSpec{Name: e.Name, Description: e.Description, InputSchema: e.Schema()})
		}
		return out
	})
	return c, nil
}

// CoreID returns the core the catalog was prepared for.
func (c *Catalog) CoreID() string { return c.coreID }

// Revision returns the core revision the catalog was prepared for.
func (c *Catalog) Revision() string { return c.revision }

// Entries returns the entries in catalog order. The slice is a copy.
func (c *Catalog) Entries() []*Entry { return append([]*Entry(nil), c.entries...) }

// Definitions returns the provider tool definitions, one per entry. The
// slice is a copy; the schemas are shared by every caller and read only.
func (c *Catalog) Definitions() []demiurge.ToolSpec { return slices.Clone(c.defs()) }

// Derived returns what derive makes of this catalog alone, made once per
// catalog and key: a catalog is immutable and serves the turns of one core
// revision, so a tool whose result depends on nothing but the catalog
// (tools_list) computes it once. A failed derive is not kept. key is a
// value of a type private to the caller, as for context keys.
func Derived[T any](c *Catalog, key any, derive func(*Catalog) (T, error)) (T, error) {
	if v, ok := c.derived.Load(key); ok {
		return v.(T), nil
	}
	v, err := derive(c)
	if err != nil {
		return v, err
	}
	got, _ := c.derived.LoadOrStore(key, v)
	return got.(T), nil
}

// Has reports whether the catalog offers name.
func (c *Catalog) Has(name string) bool {
	_, ok := c.byName[name]
	return ok
}

// Bind turns a model tool call into a request bound to this catalog's entry.
// ok is false when the catalog does not offer the name.
func (c *Catalog) Bind(call demiurge.ToolCall, origin string) (demiurge.EffectRequest, bool) {
	e, ok := c.byName[call.Name]
	if !ok {
		return demiurge.EffectRequest{CallID: call.ID, Name: call.Name, Arguments: call.Arguments, Origin: origin}, false
	}
	return demiurge.EffectRequest{CallID: call.ID, Name: call.Name, Entry: e, Arguments: freeze(call.Arguments), Origin: origin}, true
}

// unresolvedProvenance is the provenance reported for a name the catalog does not offer.
func (c *Catalog) unresolvedProvenance(name string) string {
	return fmt.Sprintf("unresolved:%s@%s:%s", c.coreID, c.revision, name)
}
