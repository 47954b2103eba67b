package slot

import (
	"context"

	"github.com/demiurge/demiurge"
)

// HistoryReader reads the session transcript for ctx.history. It must be safe
// for concurrent use (parallel slots read at once).
type HistoryReader interface {
	// RecentMessages returns the last limit messages of kind "message" whose
	// role is in roles (a subset of user, assistant, tool), oldest first.
	// limit is always > 0 here. It must return promptly once ctx is done
	// (the phase waits for every slot). Errors carry their domain code; the
	// message reaches authored code and the diagnostic log, so it must be safe.
	RecentMessages(ctx context.Context, limit int, roles []string) ([]demiurge.Message, error)
}

// CapabilityChecker answers capability questions against the capability
// snapshot pinned at turn admission. It must be safe for concurrent use and
// must fail closed.
type CapabilityChecker interface {
	// Can reports whether capability is granted to the slot at slotPath.
	Can(capability, slotPath string) bool
}

// TurnInfo is what ctx.turn exposes. Metadata is JSON-compatible; it is both
// ctx.turn.metadata and ctx.turn.user_input.metadata.
type TurnInfo struct {
	SessionID    string
	TurnID       string
	CoreID       string
	CoreRevision string
	UserInput    string
	Metadata     map[string]any
}

// BootstrapEnv is the environment of the bootstrap phase.
type BootstrapEnv struct {
	SessionID    string
	CoreID       string
	CoreRevision string
	Workspace    string
	Caps         CapabilityChecker // nil denies every capability
}

// InputEnv is the environment of the input phase.
type InputEnv struct {
	Turn        TurnInfo
	RawText     string
	Attachments []any // JSON-compatible descriptors, exposed read-only
	Workspace   string
	SessionRoot string        // <home>/runtime/artifacts/<session>; "" if none
	History     HistoryReader // nil reads as an empty history
	Caps        CapabilityChecker
	Agents      AgentSpawner // ctx.agents.spawn; nil: not available
}

// OutputEnv is the environment of the output phase.
type OutputEnv struct {
	Turn         TurnInfo
	ResponseText string
	Metadata     map[string]any // ctx.output.metadata (interaction metadata)
	Workspace    string
	SessionRoot  string
	History      HistoryReader
	Caps         CapabilityChecker
	Agents       AgentSpawner
}
