package turn

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/delivery"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/slot"
)

// The engine meets its collaborators through these narrow interfaces; the
// composition root passes the real runtimes.

type eventStore interface {
	Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error)
	AcquireSessionLease(ctx context.Context, sessionID, holder, hostID string) (release func(context.Context) error, err error)
}

type sessionRuntime interface {
	Resolve(ctx context.Context, req session.ResolveRequest) (demiurge.Session, bool, error)
	AppendMessage(ctx context.Context, in session.MessageInput) (demiurge.Message, error)
	History(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error)
	SetBootstrap(ctx context.Context, sessionID, snapshot string) error
	StartTurn(ctx context.Context, ts session.TurnStart) error
	FinishTurn(ctx context.Context, turnID, status string, errInfo *demiurge.ErrorInfo) error
}

type deliveryRuntime interface {
	Enqueue(ctx context.Context, in delivery.Intent) (string, error)
	Dispatch(ctx context.Context, deliveryID string) (string, error)
}

type router interface {
	Bind(sessionID string, r delivery.Route) string
	Unbind(token string)
}

type slotRunner interface {
	RunBootstrap(ctx context.Context, specs []slot.Spec, env slot.BootstrapEnv) (slot.BootstrapResult, error)
	RunInput(ctx context.Context, specs []slot.Spec, env slot.InputEnv) (slot.InputResult, error)
	RunOutput(ctx context.Context, specs []slot.Spec, env slot.OutputEnv) (slot.OutputResult, error)
}

// CoreLoader loads a core and pins its revision: the revision it returns is
// the one whose files it read.
type CoreLoader interface {
	Load(ctx context.Context, coreID string) (Snapshot, error)
}

// ProviderChoice is what provider resolution needs from a turn.
type ProviderChoice struct {
	Flag, Model             string // CLI overrides
	CoreProvider, CoreModel string
}

// Providers resolves the provider and model of a turn. Secrets returns the
// credential values that must never appear in persisted errors.
type Providers interface {
	Resolve(ctx context.Context, choice ProviderChoice) (p demiurge.Provider, id, model string, err error)
	Secrets() []string
}

// Catalogs prepares the per-turn effect catalog.
type Catalogs interface {
	Prepare(ctx context.Context, snap Snapshot, tc effect.TurnContext) (*effect.Catalog, error)
}

type effectRuntime interface {
	Execute(ctx context.Context, cat *effect.Catalog, req demiurge.EffectRequest, tc effect.TurnContext) demiurge.EffectResult
}
