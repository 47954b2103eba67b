package host

import (
	"context"

	"github.com/demiurge/demiurge/turn"
)

// CompactSession summarises the older part of a session with its own
// model and moves its cutoff (turn.Execution.Compact): /compact in the
// terminal UI and demiurge sessions compact. It waits for a running turn
// of the session to end, in this process or another, for at most
// turn.CompactLeaseWait.
func (h *Host) CompactSession(ctx context.Context, req turn.CompactRequest) (turn.CompactResult, error) {
	return h.turns.Compact(ctx, req)
}
