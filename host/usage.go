package host

import (
	"context"

	"github.com/demiurge/demiurge"
)

// SessionUsage is the provider usage of every turn of a session, summed
// (zero for a session without turns or whose provider reports none). A
// running turn counts the steps it has written so far.
func (h *Host) SessionUsage(ctx context.Context, sessionID string) (demiurge.Usage, error) {
	return h.store.SessionUsage(ctx, sessionID)
}

// TurnUsage is the provider usage of one turn; ENOTFOUND for an unknown
// turn.
func (h *Host) TurnUsage(ctx context.Context, turnID string) (demiurge.Usage, error) {
	return h.store.TurnUsage(ctx, turnID)
}

// SessionUsageSteps is SessionUsage with the number of model steps whose
// usage was recorded.
func (h *Host) SessionUsageSteps(ctx context.Context, sessionID string) (demiurge.Usage, int64, error) {
	return h.store.SessionUsageSteps(ctx, sessionID)
}

// TurnUsageSteps is TurnUsage with the number of model steps whose usage
// was recorded.
func (h *Host) TurnUsageSteps(ctx context.Context, turnID string) (demiurge.Usage, int64, error) {
	return h.store.TurnUsageSteps(ctx, turnID)
}
