package turn

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
)

// turnRun is the state of one admitted turn. It is used by one goroutine.
type turnRun struct {
	x       *Execution
	req     Request
	snap    Snapshot
	session demiurge.Session
	turnID  string
	tc      effect.TurnContext

	provider demiurge.Provider
	model    string
	win      *window // the model's token budget (window.go)
	// catalog is prepared once, by the first ctx.tools.call or the model
	// loop (catalogFor); services serve the slots (slot_tools.go).
	catalog     *effect.Catalog
	services    slotServices
	agentResult any // the output phase's ctx.result, for a parent's ctx.agents.run

	calls      []ToolCallSummary
	deliveries []DeliverySummary
	usage      demiurge.Usage // the provider usage of the steps so far (usage.go)
	steps      int            // the model calls made so far
	// pending are the events recorded since the turn's last write
	// (journal.go).
	pending []demiurge.EventBatch
}

type turnOutput struct {
	text      string
	needsUser bool
}

// run is the pipeline after admission: bootstrap, input slots, the user
// message, the catalog, the model/tool loop, output slots, deliveries.
func (t *turnRun) run(ctx context.Context) (turnOutput, error) {
	bootstrap, err := t.bootstrap(ctx)
	if err != nil {
		return turnOutput{}, err
	}
	// History is read before this turn's user message is persisted, so the
	// window holds earlier turns only.
	history, err := t.x.d.Sessions.History(ctx, t.session.ID, t.x.d.HistoryLimit)
	if err != nil {
		return turnOutput{}, err
	}
	hist := sessionHistory{t: t}
	in, err := t.x.d.Slots.RunInput(ctx, t.phaseSpecs(demiurge.PhaseInput), demiurge.InputEnv{
		Turn: t.turnInfo(t.req.Text), RawText: t.req.Text, Attachments: attachmentDescriptors(t.req.Attachments),
		Workspace: t.req.Workspace, SessionRoot: t.sessionRoot(),
		History: hist, Caps: t.tc.Grants, Agents: t.agents(), Tools: t.tools(), State: t.state(),
	})
	if err != nil {
		return turnOutput{}, err
	}
	if err := t.enqueueIntents(ctx, in.Intents); err != nil {
		return turnOutput{}, err
	}
	if strings.TrimSpace(in.PersistedUserText) != "" {
		b, _, err := t.x.d.Sessions.Message(demiurge.MessageInput{
			SessionID: t.session.ID, TurnID: t.turnID, Role: demiurge.RoleUser, Text: in.PersistedUserText,
			Visible: true, ModelVisible: true, Channel: t.req.Channel, Source: "local",
		})
		if err != nil {
			return turnOutput{}, err
		}
		t.record(b)
	}

	cat, err := t.catalogFor(ctx)
	if err != nil {
		return turnOutput{}, err
	}
	summary, err := t.x.d.Sessions.Summary(ctx, t.session)
	if err != nil {
		return turnOutput{}, err
	}
	loop := &modelLoop{
		t: t, provider: t.provider, model: t.model, catalog: cat, win: t.win,
		layers: contextLayers{
			soul: t.snap.Core.Soul, skills: skillIndex(t.snap.Core), bootstrap: bootstrap,
			system: joinContext(systemContext(in), activatedSkills(t.snap.Core, in.Skills), t.delegatedContext()), summary: summary,
			contributions: in.Contributions, history: history,
		},
	}
	out, err := loop.run(ctx, in.UserText)
	if err != nil {
		return turnOutput{}, err
	}

	res, err := t.x.d.Slots.RunOutput(ctx, t.phaseSpecs(demiurge.PhaseOutput), demiurge.OutputEnv{
		Turn: t.turnInfo(t.req.Text), ResponseText: out.text, Workspace: t.req.Workspace, SessionRoot: t.sessionRoot(),
		History: hist, Caps: t.tc.Grants, Agents: t.agents(), Tools: t.tools(), State: t.state(),
	})
	if err != nil {
		return out, err
	}
	t.agentResult = res.Result
	if err := t.enqueueIntents(ctx, res.Intents); err != nil {
		return out, err
	}
	return out, nil
}

// bootstrap runs the bootstrap phase once per session and returns the snapshot.
func (t *turnRun) bootstrap(ctx context.Context) (string, error) {
	if t.session.BootstrapInitialized {
		return t.session.BootstrapContext, nil
	}
	bs := specs(t.snap.Core, demiurge.PhaseBootstrap)
	if d := t.req.Delegation; d != nil && !d.UseBootstrap {
		bs = nil
	}
	if len(bs) == 0 {
		return "", nil
	}
	res, err := t.x.d.Slots.RunBootstrap(ctx, bs, demiurge.BootstrapEnv{
		SessionID: t.session.ID, CoreID: t.snap.Core.ID, CoreRevision: t.snap.Revision,
		Workspace: t.req.Workspace, Caps: t.tc.Grants,
	})
	if err != nil {
		return "", err
	}
	if err := t.x.d.Sessions.SetBootstrap(ctx, t.session.ID, res.Snapshot); err != nil {
		return "", err
	}
	return res.Snapshot, nil
}

func (t *turnRun) turnInfo(userInput string) demiurge.TurnInfo {
	return demiurge.TurnInfo{
		SessionID: t.session.ID, TurnID: t.turnID, CoreID: t.snap.Core.ID,
		CoreRevision: t.snap.Revision, UserInput: userInput,
	}
}

// enqueueIntents delivers the turn's delivery intents to its route at once
// and records them, with their outcomes, for the turn's next write. A
// failed delivery never fails the turn; a cancelled one ends it.
func (t *turnRun) enqueueIntents(ctx context.Context, intents []demiurge.SlotIntent) error {
	red := t.tc.Secrets.Redactor()
	for _, in := range intents {
		in = redactIntent(in, red)
		text := fallbackText(in.Blocks)
		id, status, record, err := t.x.d.Deliveries.Send(ctx, demiurge.DeliveryIntent{
			SessionID: t.session.ID, TurnID: t.turnID, Channel: t.req.Channel,
			ConversationKey: t.req.ConversationKey, Kind: in.Kind,
			Blocks: toDeliveryBlocks(in.Blocks), Visible: in.Visible, HistoryPolicy: in.HistoryPolicy,
			HistoryText: in.HistoryText, FailureHistoryText: in.FailureHistoryText, Metadata: in.Metadata,
		})
		if id == "" {
			return err // an intent that cannot be recorded
		}
		for _, b := range record {
			t.record(b)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			t.x.d.Logger.Warn("delivery dispatch", "delivery_id", id, "err", err)
		}
		t.deliveries = append(t.deliveries, DeliverySummary{DeliveryID: id, Status: status, Text: text, Kind: in.Kind, HistoryPolicy: in.HistoryPolicy, Visible: in.Visible})
	}
	return nil
}

// attachmentDescriptors are the request's attachments as
// ctx.input.attachments shows them.
func attachmentDescriptors(as []demiurge.InboundAttachment) []any {
	out := make([]any, 0, len(as))
	for _, a := range as {
		out = append(out, a.Descriptor())
	}
	return out
}

func fallbackText(blocks []demiurge.SlotBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == demiurge.BlockText && b.Text != "":
			parts = append(parts, b.Text)
		case b.Caption != "":
			parts = append(parts, b.Caption)
		}
	}
	return strings.Join(parts, "\n\n")
}

func toDeliveryBlocks(blocks []demiurge.SlotBlock) []demiurge.DeliveryBlock {
	out := make([]demiurge.DeliveryBlock, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, demiurge.DeliveryBlock{Type: b.Type, Text: b.Text, URI: b.Source, Caption: b.Caption, MediaType: b.MediaType, Metadata: b.Metadata})
	}
	return out
}

// phaseSpecs returns the slots of one phase this turn runs: the whole
// pipeline, or for a delegated child the slots it was given, in pipeline
// order (lane and order preserved).
func (t *turnRun) phaseSpecs(phase string) []demiurge.SlotSpec {
	all := specs(t.snap.Core, phase)
	d := t.req.Delegation
	if d == nil {
		return all
	}
	keep := d.InputSlots
	if phase == demiurge.PhaseOutput {
		keep = d.OutputSlots
	}
	if keep == nil {
		return all
	}
	out := all[:0:0]
	for _, s := range all {
		if slices.Contains(keep, s.ID) {
			out = append(out, s)
		}
	}
	return out
}

// agents is ctx.agents of this turn's slots (nil without a spawner).
func (t *turnRun) agents() demiurge.AgentSpawner {
	if t.x.d.Agents == nil {
		return nil
	}
	return slotAgents{t}
}

// slotAgents binds the spawner to this turn's context.
type slotAgents struct{ t *turnRun }

func (a slotAgents) Spawn(ctx context.Context, slotPath string, args map[string]any) (map[string]any, error) {
	// The child may read this session: it sees what the turn recorded.
	if err := a.t.flush(ctx); err != nil {
		return nil, err
	}
	return a.t.x.d.Agents.SpawnFromSlot(ctx, a.t.tc, slotPath, args)
}

func (a slotAgents) Run(ctx context.Context, slotPath string, args map[string]any) (map[string]any, error) {
	a.t.services.mu.Lock()
	defer a.t.services.mu.Unlock()
	if err := a.t.flush(ctx); err != nil {
		return nil, err
	}
	return a.t.x.d.Agents.RunFromSlot(ctx, a.t.tc, slotPath, args)
}

// tools is ctx.tools of this turn's slots.
func (t *turnRun) tools() demiurge.ToolCaller {
	t.services.t = t
	return &t.services
}

// sessionRoot is the session's artifact directory (ctx.*.session_root),
// "" when the Host keeps none.
func (t *turnRun) sessionRoot() string {
	if t.x.d.ArtifactRoot == "" {
		return ""
	}
	return filepath.Join(t.x.d.ArtifactRoot, t.session.ID)
}

// delegatedContext is the parent's fork context of a delegated turn.
func (t *turnRun) delegatedContext() string {
	if t.req.Delegation == nil {
		return ""
	}
	return t.req.Delegation.SystemContext
}

func joinContext(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}

// specs converts the core's slots of one phase for the slot runtime.
func specs(c *core.Core, phase string) []demiurge.SlotSpec {
	var out []demiurge.SlotSpec
	for _, s := range c.Slots[phase] {
		out = append(out, demiurge.SlotSpec{
			ID: s.ID, Phase: s.Phase, Lane: s.Lane, RelPath: s.RelPath,
			ModulePath: s.ModulePath, CoreDir: c.Dir, Function: s.Function, FailurePolicy: s.FailurePolicy,
			HistoryPolicy: s.HistoryPolicy, DefaultPlacement: s.DefaultPlacement,
			Timeout: time.Duration(s.TimeoutSeconds * float64(time.Second)), Capabilities: s.Capabilities,
		})
	}
	return out
}

// sessionHistory gives slots read access to the session's recent messages.
type sessionHistory struct{ t *turnRun }

func (h sessionHistory) RecentMessages(ctx context.Context, limit int, roles []string) ([]demiurge.Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	if err := h.t.flush(ctx); err != nil {
		return nil, err
	}
	msgs, err := h.t.x.d.Sessions.History(ctx, h.t.session.ID, limit)
	if err != nil || len(roles) == 0 {
		return msgs, err
	}
	keep := msgs[:0]
	for _, m := range msgs {
		if slices.Contains(roles, m.Role) {
			keep = append(keep, m)
		}
	}
	return keep, nil
}
