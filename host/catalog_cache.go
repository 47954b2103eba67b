package host

import (
	"sync"

	"github.com/demiurge/demiurge/effect"
)

// catalogCache keeps, per core revision, what a turn's catalog is made of
// that only the revision decides: the builtin and authored definitions, and
// the catalog itself for the turns that add nothing to them (no MCP tools,
// no delegated tool policy). A revision names the core's files, and the
// Host's builtin deps and global approval configuration do not change
// while it runs, so a hit is exactly what preparing again would give; the
// catalog is immutable and shared. Only the newest revision of each core is
// kept. A nil cache (before the builtin deps are complete) keeps nothing.
type catalogCache struct {
	mu    sync.Mutex // guards cores
	cores map[string]cachedCatalog
}

type cachedCatalog struct {
	revision string
	builtins []effect.Definition
	authored []effect.Definition
	catalog  *effect.Catalog // nil until a plain turn prepared it
}

func (c *catalogCache) get(coreID, revision string) (cachedCatalog, bool) {
	if c == nil || revision == "" {
		return cachedCatalog{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hit, ok := c.cores[coreID]
	return hit, ok && hit.revision == revision
}

func (c *catalogCache) put(coreID string, e cachedCatalog) {
	if c == nil || e.revision == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cores == nil {
		c.cores = map[string]cachedCatalog{}
	}
	c.cores[coreID] = e
}
