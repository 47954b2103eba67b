package turn

import (
	"context"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// The engine meets its collaborators through these narrow interfaces; the
// composition root passes the real runtimes.

// eventStore writes batches in one transaction each, all or nothing; the
// lease methods take or release a session lease in the same transaction.
type eventStore interface {
	AppendBatches(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error)
	AcquireSessionLeaseWith(ctx context.Context, sessionID, holder, hostID string, then []demiurge.EventBatch) ([][]demiurge.Event, error)
	ReleaseSessionLeaseWith(ctx context.Context, sessionID, holder, hostID string, first []demiurge.EventBatch) ([][]demiurge.Event, error)
	// PrepareTurnEnd readies what the turn's end transaction runs; the
	// turn calls it while its model works. It is a cache: a failure only
	// leaves the work to the end.
	PrepareTurnEnd(ctx context.Context) error
}

type sessionRuntime interface {
	Resolve(ctx context.Context, req demiurge.SessionRequest) (demiurge.Session, bool, error)
	Message(in demiurge.MessageInput) (demiurge.EventBatch, demiurge.Message, error)
	History(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error)
	// Lookup reads a session whoever owns it; Summary is the text of its
	// compaction summary ("" for none); Compaction is the batch that
	// records a summary and moves the cutoff.
	Lookup(ctx context.Context, id string) (demiurge.Session, error)
	Summary(ctx context.Context, s demiurge.Session) (string, error)
	Compaction(in demiurge.CompactionInput) (demiurge.EventBatch, demiurge.Message, error)
	SetBootstrap(ctx context.Context, sessionID, snapshot string) error
	TurnStarted(ts demiurge.TurnStart) (demiurge.EventBatch, error)
	FinishStartedTurnWith(ctx context.Context, started demiurge.Event, sessionID string, status demiurge.TurnStatus, errInfo *demiurge.ErrorInfo, first []demiurge.EventBatch, commit demiurge.CommitBatches) error
}

type deliveryRuntime interface {
	// Send delivers in and returns the batches that record it and its
	// outcome, for the turn's next write; the id is empty (and nothing is
	// sent) only for an intent that cannot be recorded.
	Send(ctx context.Context, in demiurge.DeliveryIntent) (id, status string, record []demiurge.EventBatch, err error)
}

type router interface {
	Bind(sessionID string, r demiurge.Route) string
	Unbind(token string)
}

type slotRunner interface {
	RunBootstrap(ctx context.Context, specs []demiurge.SlotSpec, env demiurge.BootstrapEnv) (demiurge.BootstrapResult, error)
	RunInput(ctx context.Context, specs []demiurge.SlotSpec, env demiurge.InputEnv) (demiurge.InputResult, error)
	RunOutput(ctx context.Context, specs []demiurge.SlotSpec, env demiurge.OutputEnv) (demiurge.OutputResult, error)
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
	// CoreModelOptions is the core's model.model_options.
	CoreModelOptions map[string]any
}

// ResolvedModel is the provider, profile id, model and the model's limits
// a turn talks to.
type ResolvedModel struct {
	Provider demiurge.Provider
	ID       string
	Model    string
	Limits   demiurge.ModelLimits
}

// Providers resolves the provider and model of a turn. Secrets returns the
// credential values that must never appear in persisted errors.
type Providers interface {
	Resolve(ctx context.Context, choice ProviderChoice) (ResolvedModel, error)
	Secrets() []string
}

// Catalogs prepares the per-turn effect catalog.
type Catalogs interface {
	Prepare(ctx context.Context, snap Snapshot, tc effect.TurnContext) (*effect.Catalog, error)
}

type effectRuntime interface {
	Execute(ctx context.Context, cat *effect.Catalog, req demiurge.EffectRequest, tc effect.TurnContext) demiurge.EffectResult
}
