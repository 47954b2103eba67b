package turn

import (
	"context"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
)

// maxToolResultChars bounds a tool result replayed to the model.
const maxToolResultChars = 4000

// modelLoop is the TurnEngine: it alternates provider calls and tool calls
// until the model answers without tool calls, a tool ends the turn, or the
// step budget runs out.
type modelLoop struct {
	t        *turnRun
	provider demiurge.Provider
	model    string
	catalog  *effect.Catalog
	layers   contextLayers
	win      *window
	fit      *fitted                 // the context fitted to the window (prepare.go)
	forced   bool                    // the one forced compaction of the turn has run
	inTurn   []demiurge.ModelMessage // assistant and tool messages of this turn (model views)
	raw      []demiurge.ToolCall     // the current step's calls with their raw arguments
	known    int                     // size of the secret set inTurn was last redacted with
}

func (l *modelLoop) run(ctx context.Context, userText string) (turnOutput, error) {
	t := l.t
	maxSteps := t.snap.Core.MaxModelSteps
	if maxSteps <= 0 || maxSteps > 90 {
		maxSteps = 90
	}
	tools := l.catalog.Definitions()
	l.fit = newFitted(l.win, l.layers, tools, &t.x.counts)
	switch {
	case len(l.layers.history) >= t.x.d.HistoryLimit:
		// The window is full: what falls out next must be summarised,
		// however little it weighs.
		l.compact(ctx, compactWindowFull, tools)
	case l.fit.wantsCompaction(userText):
		l.compact(ctx, compactAuto, tools)
	}
	for n := 1; n <= maxSteps; n++ {
		stepID := fmt.Sprintf("%s_step_%d", t.turnID, n)
		l.reredact()
		resp, err := l.step(ctx, stepID, userText, tools)
		if err != nil {
			return turnOutput{}, err
		}
		l.noteStep(stepID, n, resp)
		resp = l.redactResponse(resp)
		if len(resp.ToolCalls) == 0 {
			return turnOutput{text: resp.Content}, nil
		}
		limit := t.x.maxToolCallsPerStep()
		resp, run := boundStep(resp, limit)
		if err := l.recordAssistantStep(ctx, stepID, resp); err != nil {
			return turnOutput{}, err
		}
		for i, call := range resp.ToolCalls[:run] {
			res, err := l.call(ctx, stepID, call, l.raw[i].Arguments)
			if err != nil {
				return turnOutput{}, err
			}
			if res.Terminate {
				needsUser, _ := res.Data["needs_user"].(bool)
				return turnOutput{text: res.OperatorView, needsUser: needsUser}, nil
			}
		}
		if err := l.refuseOverBound(ctx, stepID, resp.ToolCalls[run:], limit, len(resp.ToolCalls)); err != nil {
			return turnOutput{}, err
		}
	}
	return turnOutput{text: fmt.Sprintf("The provider did not produce a final assistant message within the configured step budget of %d.", maxSteps)}, nil
}

// step makes one model call within the window. A provider that refuses
// the request as over its context window gets one forced compaction and
// one retry per turn; a second refusal is the typed overflow.
func (l *modelLoop) step(ctx context.Context, stepID, userText string, tools []demiurge.ToolSpec) (demiurge.ModelResponse, error) {
	p, err := l.fit.prepare(userText, l.inTurn)
	if err != nil {
		return demiurge.ModelResponse{}, err
	}
	resp, err := l.complete(ctx, stepID, p, tools)
	if demiurge.ErrorCode(err) != demiurge.ECONTEXTOVERFLOW || l.forced {
		return resp, err
	}
	l.forced = true
	// The request was larger than counted: at least the window less the
	// output reserve. The calibration learns that before anything is
	// refitted.
	w := l.win
	l.win.calib.Observe(int64(p.raw), int64(float64(w.limits.ContextWindow-w.reserve)*1.05))
	l.t.x.d.Logger.Warn("provider refused the request as over its context window; compacting and retrying once",
		"session_id", l.t.session.ID, "turn_id", l.t.turnID, "step_id", stepID, "estimate", p.estimate, "err", err)
	l.compact(ctx, compactForced, tools)
	if p, err = l.fit.prepare(userText, l.inTurn); err != nil {
		return demiurge.ModelResponse{}, err
	}
	resp, err = l.complete(ctx, stepID, p, tools)
	if demiurge.ErrorCode(err) == demiurge.ECONTEXTOVERFLOW {
		return resp, demiurge.Errorf(demiurge.ECONTEXTOVERFLOW,
			"the provider refused the request as over the model's context window after a forced compaction: estimated %d tokens against an input budget of %d (window %d); over by an unknown amount: %s",
			p.estimate, w.budget(), w.limits.ContextWindow, demiurge.ErrorMessage(err))
	}
	return resp, err
}

// complete sends one prepared request, streaming (a caller without a
// Stream gets its deltas dropped), and lets the calibration learn from
// the usage the provider reports.
func (l *modelLoop) complete(ctx context.Context, stepID string, p preparedRequest, tools []demiurge.ToolSpec) (demiurge.ModelResponse, error) {
	t := l.t
	stream, flush := l.redactedStream()
	resp, err := l.provider.Complete(ctx, demiurge.ModelRequest{
		Model: l.model, Messages: p.msgs, Tools: tools,
		MaxTokens: l.win.reserve, CacheKey: t.session.ID, StableMessages: p.stable,
		Metadata: map[string]any{"turn_id": t.turnID, "step_id": stepID},
	}, stream)
	flush()
	if err != nil {
		return resp, err
	}
	t.steps++
	l.win.calib.Observe(int64(p.raw), resp.Usage.InputTokens)
	return resp, nil
}

// compact summarises the session's older history and refits the context
// to what is left. It is best effort: a compaction that fails or finds
// nothing to do changes nothing, and the turn goes on with pruning alone.
func (l *modelLoop) compact(ctx context.Context, mode compactMode, tools []demiurge.ToolSpec) {
	t := l.t
	c := &compactor{x: t.x, provider: l.provider, model: l.model, win: l.win, sessionID: t.session.ID, skipTurn: t.turnID}
	res, batch, err := c.summarise(ctx, "", mode)
	if err == nil && batch != nil {
		_, err = t.x.d.Store.AppendBatches(ctx, []demiurge.EventBatch{*batch})
	}
	if err != nil {
		t.x.d.Logger.Warn("compaction failed; the turn goes on with pruning", "session_id", t.session.ID, "turn_id", t.turnID, "err", err)
		return
	}
	if res.Skipped {
		return
	}
	history, err := t.x.d.Sessions.History(ctx, t.session.ID, t.x.d.HistoryLimit)
	if err != nil {
		t.x.d.Logger.Warn("history after compaction", "session_id", t.session.ID, "err", err)
		return
	}
	// This turn's own messages may already be written; they are in inTurn.
	keep := history[:0:0]
	for _, m := range history {
		if m.TurnID != t.turnID {
			keep = append(keep, m)
		}
	}
	l.layers.history, l.layers.summary = keep, res.Summary
	l.fit = newFitted(l.win, l.layers, tools, &t.x.counts)
	t.x.d.Logger.Info("session compacted", "session_id", t.session.ID, "turn_id", t.turnID,
		"compacted", res.Compacted, "chunks", res.Chunks, "summary_message_id", res.SummaryMessageID)
}

// reredact redacts this turn's earlier messages again when the secret set
// grew since, so a value a later call revealed is not replayed to the
// provider from an earlier result that held it bare.
func (l *modelLoop) reredact() {
	red := l.t.tc.Secrets.Redactor()
	n := len(red.Secrets())
	if n == l.known {
		return
	}
	l.known = n
	for i := range l.inTurn {
		l.inTurn[i].Content = red.String(l.inTurn[i].Content, redact.Model)
	}
}

// redactedStream returns the delta callback for one provider call: the
// caller's Stream behind an exact-value redactor that knows the turn's
// secrets so far, whatever the chunking, and the flush to call once the
// provider returned. Without a Stream the callback drops the deltas.
func (l *modelLoop) redactedStream() (stream func(string), flush func()) {
	out := l.t.req.Stream
	if out == nil {
		// Every call streams all the same: usage, first-token latency and
		// cancellation then work alike for every caller.
		return func(string) {}, func() {}
	}
	s := redact.NewStream(deltaWriter(out), l.t.tc.Secrets.Replacements())
	return func(delta string) { _, _ = s.Write([]byte(delta)) }, func() { _ = s.Close() }
}

// deltaWriter adapts a delta callback to io.Writer.
type deltaWriter func(string)

func (w deltaWriter) Write(p []byte) (int, error) {
	w(string(p))
	return len(p), nil
}

// redactResponse records the secrets in the model's tool-call arguments and
// returns the response as it may be persisted and replayed: text and
// arguments in their model view. The calls themselves run with the raw
// arguments; nothing else keeps them.
func (l *modelLoop) redactResponse(resp demiurge.ModelResponse) demiurge.ModelResponse {
	var found []redact.Secret
	for _, c := range resp.ToolCalls {
		found = append(found, redact.Discover(map[string]any{"arguments": c.Arguments})...)
	}
	red := l.t.tc.Secrets.Add(found...)
	out := demiurge.ModelResponse{Content: red.String(resp.Content, redact.Model), Raw: resp.Raw, Usage: resp.Usage}
	for _, c := range resp.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, demiurge.ToolCall{ID: c.ID, Name: c.Name, Arguments: redactArgs(red, c.Arguments, redact.Model)})
	}
	l.raw = resp.ToolCalls
	return out
}

func redactArgs(red *redact.Redactor, args map[string]any, view redact.View) map[string]any {
	v, err := red.Value(args, view)
	if m, ok := v.(map[string]any); ok && err == nil {
		return m
	}
	return map[string]any{"redaction": redact.RedactionFailed}
}

// recordAssistantStep keeps the assistant message with its tool calls for
// the rest of the turn and persists it (visible only when it has text).
func (l *modelLoop) recordAssistantStep(ctx context.Context, stepID string, resp demiurge.ModelResponse) error {
	l.inTurn = append(l.inTurn, demiurge.ModelMessage{Role: demiurge.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
	calls := make([]any, 0, len(resp.ToolCalls))
	for _, c := range resp.ToolCalls {
		calls = append(calls, map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments})
	}
	b, _, err := l.t.x.d.Sessions.Message(demiurge.MessageInput{
		SessionID: l.t.session.ID, TurnID: l.t.turnID, Role: demiurge.RoleAssistant, Text: resp.Content,
		Visible: strings.TrimSpace(resp.Content) != "", ModelVisible: true,
		Metadata: map[string]any{"phase": "model_step", "step_id": stepID, "interim": true, "tool_calls": calls},
	})
	if err != nil {
		return err
	}
	l.t.record(b)
	return nil
}

// call runs one tool call through the effect runtime and records it: the
// tool.call.started and tool.call.completed|failed events, the tool message
// for the model, and the summary for the caller.
// call receives the call in its model view and the raw arguments the effect
// runs with; only redacted forms are recorded.
func (l *modelLoop) call(ctx context.Context, stepID string, call demiurge.ToolCall, rawArgs map[string]any) (demiurge.EffectResult, error) {
	t := l.t
	tc := t.tc
	tc.StepID = stepID
	recordID := demiurge.NewID("call")
	req, bound := l.catalog.Bind(demiurge.ToolCall{ID: call.ID, Name: call.Name, Arguments: rawArgs}, demiurge.OriginModel)
	durableArgs := redactArgs(tc.Secrets.Redactor(), rawArgs, redact.Durable)

	source, prov := "", ""
	if e, ok := req.Entry.(*effect.Entry); ok && bound {
		source, prov = e.Source, e.Provenance
	}
	started := demiurge.NewEvent(demiurge.AggToolCall, recordID, demiurge.ToolCallStartedPayload{
		TurnID: t.turnID, StepID: stepID, ToolName: call.Name, Status: "running",
		ProviderCallID: call.ID, Args: durableArgs, EffectSource: source,
		EffectProvenance: prov, CoreRevision: t.snap.Revision,
	})
	// Everything before the call, and its start, is durable before it runs.
	if err := t.flush(ctx, demiurge.EventBatch{Events: []demiurge.Event{started}}); err != nil {
		return demiurge.EffectResult{}, err
	}

	var obs *callObserver
	if observe := t.req.OnToolCall; observe != nil {
		obs = observeCall(observe, stepID, "", call)
		tc = obs.context(tc)
	}
	var res demiurge.EffectResult
	if bound {
		res = t.x.d.Effects.Execute(ctx, l.catalog, req, tc)
	} else {
		res = effect.NotFound(l.catalog, call.Name)
	}

	evType, status := demiurge.EvToolCallCompleted, "succeeded"
	if res.IsError() {
		evType, status = demiurge.EvToolCallFailed, "failed"
	}
	end, err := demiurge.ToolCallEnd{
		TurnID: t.turnID, StepID: stepID, ToolName: call.Name, Status: status,
		EffectStatus: res.Status, EffectError: res.Error, Result: res.DurableView,
	}.As(evType)
	if err != nil {
		return res, err
	}
	// The completion and the tool message ride with the turn's next write,
	// which happens even if the turn is being cancelled (its end).
	t.record(demiurge.EventBatch{Events: []demiurge.Event{demiurge.NewEvent(demiurge.AggToolCall, recordID, end)}})
	if err := l.appendToolMessage(stepID, call, truncateForModel(res.ModelView), res.IsError()); err != nil {
		return res, err
	}
	t.calls = append(t.calls, ToolCallSummary{
		CallID: call.ID, Name: call.Name, Status: res.Status, IsError: res.IsError(),
		ExecutionStarted: res.ExecutionStarted, Content: res.ModelView,
	})
	if obs != nil {
		obs.end(res, tc.Secrets.Redactor())
	}
	return res, ctx.Err()
}

// refuseOverBound answers the calls past the step's bound without running
// them: a tool message each (the provider expects one per call id) and an
// invalid entry in the turn's summary, but no tool.call events, so a step
// of thousands of calls costs little.
func (l *modelLoop) refuseOverBound(ctx context.Context, stepID string, calls []demiurge.ToolCall, limit, total int) error {
	if len(calls) == 0 {
		return nil
	}
	msg := overStepBound(limit, total)
	for _, call := range calls {
		if err := l.appendToolMessage(stepID, call, msg, true); err != nil {
			return err
		}
		l.t.calls = append(l.t.calls, ToolCallSummary{CallID: call.ID, Name: call.Name, Status: demiurge.EffectInvalid, IsError: true, Content: msg})
	}
	return nil
}

// appendToolMessage answers call with content: in this turn's replay and,
// model-visible only, in the session (recorded for the turn's next write).
func (l *modelLoop) appendToolMessage(stepID string, call demiurge.ToolCall, content string, isError bool) error {
	l.inTurn = append(l.inTurn, demiurge.ModelMessage{Role: demiurge.RoleTool, Content: content, Name: call.Name, ToolCallID: call.ID})
	b, _, err := l.t.x.d.Sessions.Message(demiurge.MessageInput{
		SessionID: l.t.session.ID, TurnID: l.t.turnID, Role: demiurge.RoleTool, Text: content,
		Visible: false, ModelVisible: true,
		Metadata: map[string]any{"step_id": stepID, "tool_name": call.Name, "tool_call_id": call.ID, "is_error": isError},
	})
	if err != nil {
		return err
	}
	l.t.record(b)
	return nil
}

func truncateForModel(s string) string {
	r := []rune(s)
	if len(r) <= maxToolResultChars {
		return s
	}
	return string(r[:maxToolResultChars]) + fmt.Sprintf("\n...[truncated %d chars]", len(r)-maxToolResultChars)
}
