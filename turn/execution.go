package turn

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
)

// Deps are the collaborators of an Execution. Every field is required except
// Logger.
type Deps struct {
	Store      eventStore
	Sessions   sessionRuntime
	Deliveries deliveryRuntime
	Router     router
	Slots      slotRunner
	Cores      CoreLoader
	Providers  Providers
	Catalogs   Catalogs
	Effects    effectRuntime
	HostID     string
	Logger     *slog.Logger
	// HistoryLimit bounds the history window replayed to the model (default 200).
	HistoryLimit int
	// MaxToolCallsPerStep bounds the tool calls run for one model step
	// (default DefaultMaxToolCallsPerStep); each call past it gets an
	// invalid result saying so, and the turn goes on.
	MaxToolCallsPerStep int
	// Agents starts child agents for ctx.agents.spawn and runs them for
	// ctx.agents.run (nil: slots get an error when they try).
	Agents AgentSpawner
	// ArtifactRoot holds the sessions' artifact directories: a slot's
	// session_root is <ArtifactRoot>/<session id> ("" : none).
	ArtifactRoot string
	// State reads the authored state documents of ctx.state (nil: slots
	// get an error when they try).
	State StateReader
}

// AgentSpawner starts a child agent on behalf of a slot of a turn, as a
// task (spawn) or synchronously (run).
type AgentSpawner interface {
	SpawnFromSlot(ctx context.Context, tc effect.TurnContext, slotPath string, args map[string]any) (map[string]any, error)
	RunFromSlot(ctx context.Context, tc effect.TurnContext, slotPath string, args map[string]any) (map[string]any, error)
}

// Execution runs turns: admission, slots, the model/tool loop, deliveries and
// exactly one terminal state per started turn. It is safe for concurrent use;
// turns of one session are serialised (FIFO in process, a store lease across
// processes), turns of different sessions run concurrently.
type Execution struct {
	d     Deps
	queue *sessionQueue
	adm   *admission

	mu     sync.Mutex // guards active
	active map[string]*activeTurn

	// calib keeps each session's token calibration, counts the token
	// counts of persisted messages (window.go).
	calib  calibrations
	counts countCache
}

type activeTurn struct {
	sessionID string
	scope     demiurge.PrincipalScope
	cancel    context.CancelFunc
}

// New returns an Execution.
func New(d Deps) *Execution {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.HistoryLimit <= 0 {
		d.HistoryLimit = 200
	}
	return &Execution{d: d, queue: newSessionQueue(), adm: newAdmission(), active: map[string]*activeTurn{}}
}

// errTurnCancelled is the cancellation recorded for a cancelled turn.
var errTurnCancelled = demiurge.Errorf(demiurge.ECANCELED, "turn cancelled")

// Run executes one turn. It returns an error, and starts no turn, when the
// request is invalid, the core cannot be loaded or the session cannot be
// resolved; once a turn has started every failure is reported in the Result
// (Outcome failed or cancelled) and the turn has exactly one terminal event.
// After Close it fails with EUNAVAILABLE.
func (x *Execution) Run(ctx context.Context, req Request) (Result, error) {
	ctx, leave, err := x.adm.enter(ctx)
	if err != nil {
		return Result{}, err
	}
	defer leave()
	if strings.TrimSpace(req.Text) == "" {
		return Result{}, demiurge.Errorf(demiurge.EINVALID, "turn text is empty")
	}
	if req.TurnID != "" && demiurge.IDPrefix(req.TurnID) != "turn" {
		return Result{}, demiurge.Errorf(demiurge.EINVALID, "a chosen turn id needs the turn_ prefix")
	}
	if req.Scope.Authority == "" {
		req.Scope = demiurge.OperatorScope("")
	}
	snap, err := x.d.Cores.Load(ctx, req.CoreID)
	if err != nil {
		return Result{}, err
	}
	// The provider is resolved before any turn starts: a missing key is a
	// configuration error, not a failed turn.
	rm, err := x.d.Providers.Resolve(ctx, ProviderChoice{
		Flag: req.Provider, Model: req.Model,
		CoreProvider: snap.Core.Manifest.Model.Provider, CoreModel: snap.Core.Manifest.Model.ModelName,
		CoreModelOptions: snap.Core.Manifest.Model.ModelOptions,
	})
	if err != nil {
		return Result{}, err
	}
	model := rm.Model
	// The window is checked before any turn starts too: a window the
	// core's own limits make unusable is a configuration error.
	if _, err := newWindow(rm.Limits, snap.Core.Manifest.Model, nil); err != nil {
		return Result{}, err
	}
	sess, _, err := x.d.Sessions.Resolve(ctx, demiurge.SessionRequest{
		CoreID: snap.Core.ID, CoreRevision: snap.Revision,
		Channel: req.Channel, ConversationKey: req.ConversationKey,
		SessionID: req.SessionID, New: req.NewSession, NewSessionID: req.NewSessionID, Scope: req.Scope,
		Workspace: req.Workspace, Provider: req.Provider, Model: model,
	})
	if err != nil {
		return Result{}, err
	}
	if req.Scope.Authority != demiurge.AuthorityOperator && !req.Scope.Allows(sess.ID) {
		return Result{}, demiurge.Errorf(demiurge.ENOTFOUND, "session not found: %s", sess.ID)
	}
	scope := req.Scope
	if scope.Authority == demiurge.AuthorityOperator {
		scope = demiurge.OperatorScope(sess.ID)
	}

	release, err := x.queue.acquire(ctx, sess.ID)
	if err != nil {
		return Result{}, demiurge.WrapError(demiurge.ECANCELED, err, "stopped waiting for session %s", sess.ID)
	}
	defer release()

	turnID := cmp.Or(req.TurnID, demiurge.NewID("turn"))
	started, err := x.d.Sessions.TurnStarted(demiurge.TurnStart{
		TurnID: turnID, SessionID: sess.ID, CoreID: snap.Core.ID, CoreRevision: snap.Revision, HostID: x.d.HostID,
	})
	if err != nil {
		return Result{}, err
	}
	// The lease and turn.started are one transaction; the terminal event
	// and the release are another (released tells the deferred release
	// whether that one committed).
	admitted, err := x.d.Store.AcquireSessionLeaseWith(ctx, sess.ID, turnID, x.d.HostID, []demiurge.EventBatch{started})
	if err != nil {
		return Result{}, err
	}
	// The stored turn.started lets the end expect the turn unchanged
	// instead of reading it back.
	startedEv := started.Events[0]
	if len(admitted) > 0 && len(admitted[0]) > 0 {
		startedEv = admitted[0][0]
	}
	// The end transaction's statements, and the encoders of the events it
	// writes, are made ready while the turn runs, so that the end has only
	// its writes left to do.
	var prepared sync.WaitGroup
	prepared.Go(func() {
		_ = x.d.Store.PrepareTurnEnd(ctx)
		warmEndEncoders()
	})
	defer prepared.Wait()
	released := false
	defer func() {
		if released {
			return
		}
		if _, err := x.d.Store.ReleaseSessionLeaseWith(ctx, sess.ID, turnID, x.d.HostID, nil); err != nil {
			x.d.Logger.Warn("release session lease", "session_id", sess.ID, "err", err)
		}
	}()

	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.track(turnID, &activeTurn{sessionID: sess.ID, scope: scope, cancel: cancel})
	defer x.untrack(turnID)
	if req.OnAdmitted != nil {
		req.OnAdmitted(sess.ID, turnID)
	}

	if req.Route != nil {
		token := x.d.Router.Bind(sess.ID, req.Route)
		defer x.d.Router.Unbind(token)
		turnCtx = demiurge.WithRouteToken(turnCtx, token)
	}

	win, err := newWindow(rm.Limits, snap.Core.Manifest.Model, x.calib.of(sess.ID, model))
	if err != nil {
		return Result{}, err
	}
	t := &turnRun{
		x: x, req: req, snap: snap, session: sess, turnID: turnID, provider: rm.Provider, model: model, win: win,
		tc: effect.TurnContext{
			SessionID: sess.ID, TurnID: turnID, CoreID: snap.Core.ID, CoreRevision: snap.Revision,
			Workspace: req.Workspace, Scope: scope, Grants: grantsOf(snap), Approver: req.Approver,
			Secrets: knownSecrets(x.d.Providers.Secrets()),
		},
	}
	t.tc.ProtectedNames = req.ProtectedNames
	if d := req.Delegation; d != nil {
		t.tc.ToolPolicy, t.tc.DelegationDepth, t.tc.TaskID = d.ToolPolicy, d.Depth, d.TaskID
	}
	res := Result{SessionID: sess.ID, TurnID: turnID, CoreID: snap.Core.ID, CoreRevision: snap.Revision}
	out, runErr := t.run(turnCtx)
	res.Text, res.ToolCalls, res.Deliveries, res.Usage, res.Steps = out.text, t.calls, t.deliveries, t.usage, t.steps
	res.AgentResult = t.agentResult

	// The terminal event is written even when the caller's context is gone.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer fcancel()
	switch {
	case runErr == nil && out.needsUser:
		res.Outcome = OutcomeNeedsUser
	case runErr == nil:
		res.Outcome = OutcomeCompleted
	case errors.Is(runErr, context.Canceled) || demiurge.ErrorCode(runErr) == demiurge.ECANCELED || turnCtx.Err() != nil:
		res.Outcome = OutcomeCancelled
		res.Error = errTurnCancelled
	default:
		res.Outcome = OutcomeFailed
		res.Error = sanitizeError(runErr, x.d.Providers.Secrets())
	}
	var errInfo *demiurge.ErrorInfo
	if res.Error != nil {
		errInfo = &demiurge.ErrorInfo{Code: res.Error.Code, Message: res.Error.Message}
	}
	end := func(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error) {
		stored, err := x.d.Store.ReleaseSessionLeaseWith(ctx, sess.ID, turnID, x.d.HostID, batches)
		released = released || err == nil
		return stored, err
	}
	if err := x.d.Sessions.FinishStartedTurnWith(fctx, startedEv, sess.ID, res.Outcome, errInfo, t.pending, end); err != nil {
		return res, err
	}
	attrs := []any{"session_id", sess.ID, "turn_id", turnID, "core_revision", snap.Revision, "outcome", res.Outcome, "tool_calls", len(res.ToolCalls)}
	if res.Error != nil {
		attrs = append(attrs, "error", res.Error.Message)
	}
	x.d.Logger.Info("turn finished", attrs...)
	return res, nil
}

// Cancel cancels a running turn. The operator may cancel any turn; other
// principals only turns of a session they own. Unknown and foreign turns give
// the same answer: "not_found".
func (x *Execution) Cancel(turnID string, scope demiurge.PrincipalScope) string {
	x.mu.Lock()
	a := x.active[turnID]
	x.mu.Unlock()
	if a == nil {
		return "not_found"
	}
	if scope.Authority != demiurge.AuthorityOperator &&
		(scope.PrincipalID != a.scope.PrincipalID || scope.Authority != a.scope.Authority || !scope.Allows(a.sessionID)) {
		return "not_found"
	}
	a.cancel()
	return string(demiurge.TurnCancelled)
}

// Active returns the ids of the turns running in this process.
func (x *Execution) Active() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]string, 0, len(x.active))
	for id := range x.active {
		out = append(out, id)
	}
	return out
}

func (x *Execution) track(id string, a *activeTurn) {
	x.mu.Lock()
	x.active[id] = a
	x.mu.Unlock()
}

func (x *Execution) untrack(id string) {
	x.mu.Lock()
	delete(x.active, id)
	x.mu.Unlock()
}

// knownSecrets seeds a turn's secret set with the Host's credentials.
func knownSecrets(values []string) *effect.Secrets {
	known := make([]redact.Secret, 0, len(values))
	for _, v := range values {
		known = append(known, redact.Secret{Value: v, Name: "API_KEY", Source: "host"})
	}
	return effect.NewSecrets(known...)
}

// grantsOf captures the capability snapshot pinned for the turn: core-wide
// defaults; for each slot its capabilities.slots grants plus its own slot.yaml
// list; for each authored tool its capabilities.slots grants only (a tool's
// manifest can never grant the capability that gates it).
func grantsOf(snap Snapshot) policy.Grants {
	src := snap.Core.CapabilitySources()
	paths := map[string][]string{}
	for p, caps := range src.Paths {
		paths[p] = append([]string(nil), caps...)
	}
	for _, phase := range snap.Core.AllSlots {
		for _, s := range phase {
			paths[s.RelPath] = append(paths[s.RelPath], src.Components[s.RelPath]...)
		}
	}
	return policy.NewGrants(src.Defaults, paths)
}
