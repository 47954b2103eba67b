package turn

import (
	"context"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
)

// slotServices are what a turn's slots reach beyond their own ctx: tools
// (ctx.tools.call), child agent turns (ctx.agents.run) and state
// (ctx.state). Parallel slots
// call them at once while the turn's recorded events are shared state, so
// every call holds mu for its whole length.
type slotServices struct {
	t    *turnRun
	mu   sync.Mutex
	docs map[string]map[string]any // ctx.state documents by scope, with the turn's writes (slot_state.go)
}

// catalogFor prepares the turn's catalog once: a slot's ctx.tools.call in
// the input phase prepares it, and the model loop reuses it.
func (t *turnRun) catalogFor(ctx context.Context) (*effect.Catalog, error) {
	if t.catalog != nil {
		return t.catalog, nil
	}
	cat, err := t.x.d.Catalogs.Prepare(ctx, t.snap, t.tc)
	if err != nil {
		return nil, err
	}
	t.catalog = cat
	return cat, nil
}

// CallTool runs one ctx.tools.call as the model loop runs a model's call,
// with origin authored: the turn's catalog (a tool the core does not see
// is not found), the registry capability, the approval (asked of the
// turn's approver) and the tool.call events; no tool message is added for
// the model. An observer of the turn (Request.OnToolCall) sees it as a
// model's call, with the slot's path. The slot gets the durable view of
// the result.
func (s *slotServices) CallTool(ctx context.Context, slotPath, name string, args map[string]any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t
	cat, err := t.catalogFor(ctx)
	if err != nil {
		return nil, err
	}
	tc := t.tc
	tc.StepID = t.turnID + "_slot"
	callID, recordID := demiurge.NewID("call"), demiurge.NewID("call")
	req, bound := cat.Bind(demiurge.ToolCall{ID: callID, Name: name, Arguments: args}, demiurge.OriginAuthored)
	source, prov := "", ""
	if e, ok := req.Entry.(*effect.Entry); ok && bound {
		source, prov = e.Source, e.Provenance
	}
	started := demiurge.NewEvent(demiurge.AggToolCall, recordID, demiurge.ToolCallStartedPayload{
		TurnID: t.turnID, StepID: tc.StepID, ToolName: name, Status: "running",
		ProviderCallID: callID, Args: redactArgs(tc.Secrets.Redactor(), args, redact.Durable),
		EffectSource: source, EffectProvenance: prov, CoreRevision: t.snap.Revision,
	})
	if err := t.flush(ctx, demiurge.EventBatch{Events: []demiurge.Event{started}}); err != nil {
		return nil, err
	}
	// A tool card, as for a model's call; the slot's name on it.
	var obs *callObserver
	if observe := t.req.OnToolCall; observe != nil {
		obs = observeCall(observe, tc.StepID, slotPath, demiurge.ToolCall{ID: callID, Name: name, Arguments: redactArgs(tc.Secrets.Redactor(), args, redact.Model)})
		tc = obs.context(tc)
	}
	var res demiurge.EffectResult
	if bound {
		res = t.x.d.Effects.Execute(ctx, cat, req, tc)
	} else {
		res = effect.NotFound(cat, name)
	}
	if obs != nil {
		obs.end(res, tc.Secrets.Redactor())
	}
	evType, status := demiurge.EvToolCallCompleted, "succeeded"
	if res.IsError() {
		evType, status = demiurge.EvToolCallFailed, "failed"
	}
	end, err := demiurge.ToolCallEnd{
		TurnID: t.turnID, StepID: tc.StepID, ToolName: name, Status: status,
		EffectStatus: res.Status, EffectError: res.Error, Result: res.DurableView,
	}.As(evType)
	if err != nil {
		return nil, err
	}
	t.record(demiurge.EventBatch{Events: []demiurge.Event{demiurge.NewEvent(demiurge.AggToolCall, recordID, end)}})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return slotToolResult(res), nil
}

// slotToolResult is the ToolResult a slot sees: the durable (redacted)
// content, the model's view when it differs, the operator's display when
// it differs.
func slotToolResult(res demiurge.EffectResult) map[string]any {
	content, _ := res.DurableView["content"].(string)
	out := map[string]any{
		"content": content, "data": res.Data, "is_error": res.IsError(), "terminate": res.Terminate,
		"model_output": nil, "display_output": nil,
	}
	if res.ModelView != content {
		out["model_output"] = res.ModelView
	}
	if res.OperatorView != content {
		out["display_output"] = res.OperatorView
	}
	return out
}

// activatedSkills renders the skills the input slots activated that the
// core knows, "## Skill <name>\n\n<body>" each; unknown names are ignored.
func activatedSkills(c *core.Core, names []string) string {
	var parts []string
	for _, name := range names {
		if sk, ok := c.Skill(name); ok {
			parts = append(parts, "## Skill "+name+"\n\n"+sk.Body())
		}
	}
	return joinContext(parts...)
}
