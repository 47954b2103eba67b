package delegation

import (
	"cmp"
	"context"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// SpawnFromSlot is ctx.agents.spawn: the slot's arguments become a
// delegation from the slot's path (its grants decide agents.spawn:<core>),
// and the answer is the child's handle {task_id, core_id, session_id,
// status}.
func (s *Service) SpawnFromSlot(ctx context.Context, tc effect.TurnContext, slotPath string, args map[string]any) (map[string]any, error) {
	req, err := slotRequest(slotPath, args)
	if err != nil {
		return nil, err
	}
	task, session, err := s.spawn(ctx, tc, req)
	if err != nil {
		return nil, err
	}
	child := cmp.Or(req.CoreID, tc.CoreID)
	return map[string]any{"task_id": task.ID, "core_id": child, "session_id": session, "status": task.Status}, nil
}

// RunFromSlot is ctx.agents.run: the same child flow as SpawnFromSlot,
// checked against agents.run:<core> and the same validation except the
// task limits (no task is started), run to its end on the caller's
// goroutine. It answers the AgentRunResult {content, core_id, session_id,
// turn_id, result, deliveries, tools, metadata}; agent_run.started and
// agent_run.completed are recorded around the child turn.
func (s *Service) RunFromSlot(ctx context.Context, tc effect.TurnContext, slotPath string, args map[string]any) (map[string]any, error) {
	req, err := slotRequest(slotPath, args)
	if err != nil {
		return nil, err
	}
	p, err := s.plan(ctx, tc, req, "agents.run:", nil)
	if err != nil {
		return nil, err
	}
	c := p.child
	runID := demiurge.NewID("agent_run")
	c.TaskID = runID // the child's scope and resources are keyed by the run
	s.record(ctx, runID, demiurge.AgentRunStartedPayload{TurnID: tc.TurnID, Slot: slotPath, AgentRunID: runID, ChildCoreID: c.CoreID})
	done := demiurge.AgentRunCompletedPayload{TurnID: tc.TurnID, Slot: slotPath, AgentRunID: runID, ChildCoreID: c.CoreID, ChildSessionID: c.SessionID}
	res, err := s.d.RunChild(ctx, c)
	if err != nil {
		done.Error = errorText(err)
		s.record(ctx, runID, done)
		return nil, err
	}
	done.ChildTurnID, done.ChildOutcome, done.Chars = res.TurnID, res.Outcome, len(res.Text)
	s.record(ctx, runID, done)

	deliveries := make([]any, 0, len(res.Items))
	for _, d := range res.Items {
		deliveries = append(deliveries, map[string]any{"kind": d.Kind, "text": d.Text, "history_policy": d.HistoryPolicy, "visible": d.Visible})
	}
	tools := make([]any, 0, len(res.Tools))
	for _, t := range res.Tools {
		tools = append(tools, map[string]any{"name": t.Name, "content": t.Content, "is_error": t.IsError})
	}
	content := res.Text
	if texts := nonEmpty(res.Deliveries); len(texts) > 0 {
		content = strings.Join(texts, "\n\n")
	}
	return map[string]any{
		"content": content, "core_id": c.CoreID, "session_id": res.SessionID, "turn_id": res.TurnID,
		"result": res.Result, "deliveries": deliveries, "tools": tools,
		"metadata": map[string]any{
			"parent_turn_id": tc.TurnID, "parent_slot": slotPath, "needs_user": res.NeedsUser,
			"outcome": string(res.Outcome), "error": res.Error,
			"child_agent_slots": map[string]any{"input_slots": slotIDs(c.InputSlots), "output_slots": slotIDs(c.OutputSlots), "use_bootstrap": c.UseBootstrap},
			"child_agent_tools": toolView(c.ToolPolicy),
		},
	}, nil
}

// slotRequest reads a slot's ctx.agents arguments as a delegation from
// the slot's path.
func slotRequest(slotPath string, args map[string]any) (Request, error) {
	req := Request{
		Tools: args["tools"], InputSlots: args["input_slots"], OutputSlots: args["output_slots"],
		UseBootstrap: args["use_bootstrap"], ParentSlot: slotPath, SlotPath: slotPath,
	}
	req.Goal, _ = args["raw_input"].(string)
	req.CoreID, _ = args["core_id"].(string)
	switch c := args["context"].(type) {
	case string:
		req.Context = c
	case []any:
		var parts []string
		for _, p := range c {
			if s, ok := p.(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
		}
		req.Context = strings.Join(parts, "\n\n")
	case nil:
	default:
		return Request{}, invalidf("context must be None, a string or a list of strings")
	}
	return req, nil
}

// record writes one agent_run event (audit: a failure to record does not
// fail the run).
func (s *Service) record(ctx context.Context, runID string, p demiurge.EventPayload) {
	if s.d.Audit == nil {
		return
	}
	ev := demiurge.NewEvent(demiurge.AggAgentRun, runID, p)
	ev.Actor = map[string]any{"actor": "host.delegation"}
	_, _ = s.d.Audit(context.WithoutCancel(ctx), []demiurge.Event{ev}, "", nil)
}
