package host

import (
	"context"

	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/turn"
)

// catalogs prepares the per-turn effect catalog from the core's toolsets.
type catalogs struct{}

func (catalogs) Prepare(_ context.Context, snap turn.Snapshot, _ effect.TurnContext) (*effect.Catalog, error) {
	return effect.NewCatalog(snap.Core.ID, snap.Revision, builtin.Definitions(snap.Core.Manifest.Tools.Toolsets))
}
