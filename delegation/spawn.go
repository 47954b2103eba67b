package delegation

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
)

// Spawn validates req in the spec's order and submits the agent.spawn
// task. Refusals are EINVALID (or the worker's ECONFLICT) with the spec's
// exact text.
func (s *Service) Spawn(ctx context.Context, tc effect.TurnContext, req Request) (demiurge.Task, error) {
	task, _, err := s.spawn(ctx, tc, req)
	return task, err
}

// spawn is Spawn, also returning the child session id.
func (s *Service) spawn(ctx context.Context, tc effect.TurnContext, req Request) (demiurge.Task, string, error) {
	task, session, err := s.submitChild(ctx, tc, req)
	trail := demiurge.AgentSpawnTrail{ParentSessionID: tc.SessionID, ParentTurnID: tc.TurnID, ParentSlot: req.ParentSlot, ChildCoreID: req.CoreID}
	if err != nil {
		trail.Error = errorText(err)
		s.audit(ctx, demiurge.EvAgentSpawnRejected, tc.TurnID, trail)
		return task, session, err
	}
	trail.TaskID, trail.ChildSessionID = task.ID, session
	s.audit(ctx, demiurge.EvAgentSpawnStarted, task.ID, trail)
	return task, session, nil
}

func (s *Service) submitChild(ctx context.Context, tc effect.TurnContext, req Request) (demiurge.Task, string, error) {
	var unlock func()
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	var notify string
	p, err := s.plan(ctx, tc, req, "agents.spawn:", func() error {
		// The limits are counted and the task submitted under one lock per
		// session, so parallel slots cannot both pass the last free place.
		unlock = s.lockSession(tc.SessionID)
		if err := s.checkLimits(ctx, tc); err != nil {
			return err
		}
		var err error
		notify, err = notifyPolicy(req)
		return err
	})
	if err != nil {
		return demiurge.Task{}, "", err
	}
	plan, child, childSession, taskID := p.child, p.child.CoreID, p.child.SessionID, p.child.TaskID
	s.put(taskID, plan)

	red := tc.Secrets.Redactor()
	notifyPolicy := "completion_event"
	if notify == "silent" {
		notifyPolicy = "silent"
	}
	scope := "agent-session:" + childSession
	task, err := s.d.Submit(ctx, demiurge.TaskSpec{
		Kind: demiurge.TaskKindAgentSpawn,
		Payload: map[string]any{
			"task_id": taskID, "owner_session_id": tc.SessionID, "owner_turn_id": tc.TurnID,
			"core_id": child, "notify_policy": notifyPolicy, "source_tool": "agents.spawn", "write_scope": scope,
			"metadata": map[string]any{
				"child_core_id": child, "child_session_id": childSession, "parent_slot": req.ParentSlot,
				"goal":         red.String(req.Goal, redact.Durable),
				"context_mode": p.mode,
				"depth":        plan.Depth,
				"requested_child_agent_slots": map[string]any{
					"input_slots": slotView(req.InputSlots), "output_slots": slotView(req.OutputSlots), "use_bootstrap": plan.UseBootstrap,
				},
				"requested_child_agent_tools": p.requestedTools,
			},
		},
	}, demiurge.TaskOrigin{
		Actor: "host.task_worker", SessionID: tc.SessionID, TurnID: tc.TurnID, CoreID: tc.CoreID,
		TaskID: tc.TaskID, WriteScope: scope,
	})
	if err != nil || task.ID != taskID {
		s.take(taskID)
	}
	return task, childSession, err
}

// childPlan is a validated delegation: the child turn to run, the context
// mode and the tools as requested.
type childPlan struct {
	child          ChildTurn
	mode           string
	requestedTools any
}

// plan validates req in the spec's order for a child whose capability is
// capPrefix+<core> and resolves the child turn (its id a fresh task id,
// its session a fresh child session id). between runs after the depth
// check (spawn's limits and notify policy).
func (s *Service) plan(ctx context.Context, tc effect.TurnContext, req Request, capPrefix string, between func() error) (childPlan, error) {
	if err := checkGoal(req); err != nil {
		return childPlan{}, err
	}
	child := cmp.Or(req.CoreID, tc.CoreID)
	if capName := capPrefix + child; !tc.Grants.Can(capName, req.SlotPath) {
		where := cmp.Or(req.SlotPath, "host")
		return childPlan{}, demiurge.Errorf(demiurge.EUNAUTHORIZED, "capability denied: %s for %s", capName, where)
	}
	mode, err := contextMode(req)
	if err != nil {
		return childPlan{}, err
	}
	if err := checkDepth(tc.DelegationDepth, maxDepth(req)); err != nil {
		return childPlan{}, err
	}
	if between != nil {
		if err := between(); err != nil {
			return childPlan{}, err
		}
	}

	c, err := s.d.LoadCore(ctx, child)
	if err != nil {
		return childPlan{}, err
	}
	policy, requestedTools, err := s.resolveTools(ctx, c, req)
	if err != nil {
		return childPlan{}, err
	}
	if tc.ToolPolicy != nil {
		// A child never gets more than its parent could use.
		if policy == nil {
			policy = &effect.ToolPolicy{}
		}
		policy.Parent = tc.ToolPolicy
	}
	useBootstrap, err := readUseBootstrap(req)
	if err != nil {
		return childPlan{}, err
	}
	inSlots, err := resolveSlots(c, "input", req.InputSlots, "base_input")
	if err != nil {
		return childPlan{}, err
	}
	outSlots, err := resolveSlots(c, "output", req.OutputSlots, "base_output")
	if err != nil {
		return childPlan{}, err
	}

	fork := ""
	if mode == "fork" {
		if fork, err = s.forkContext(ctx, tc.SessionID); err != nil {
			return childPlan{}, err
		}
	}
	if strings.TrimSpace(req.Context) != "" {
		fork = strings.TrimSpace(strings.Join([]string{fork, req.Context}, "\n\n"))
	}
	return childPlan{
		child: ChildTurn{
			TaskID: demiurge.NewID("task"), Goal: req.Goal, CoreID: child, SessionID: demiurge.NewID("session_child"),
			Depth: tc.DelegationDepth + 1, ParentSessionID: tc.SessionID, ParentTurnID: tc.TurnID,
			ParentScope: tc.Scope, ParentSlot: req.ParentSlot, Workspace: tc.Workspace,
			InputSlots: inSlots, OutputSlots: outSlots, UseBootstrap: useBootstrap,
			ToolPolicy: policy, SystemContext: fork,
		},
		mode: mode, requestedTools: requestedTools,
	}, nil
}

// checkLimits applies the per-turn and per-session child limits (steps 6
// and 7).
func (s *Service) checkLimits(ctx context.Context, tc effect.TurnContext) error {
	tasks, err := s.d.Tasks(ctx, demiurge.TaskFilter{
		OwnerSessionID: tc.SessionID, Kind: demiurge.TaskKindAgentSpawn, Limit: demiurge.MaxTaskLimit,
	})
	if err != nil {
		return err
	}
	thisTurn, running := 0, 0
	for _, t := range tasks {
		if t.OwnerTurnID == tc.TurnID {
			thisTurn++
		}
		if demiurge.TaskActive(t.Status) {
			running++
		}
	}
	if thisTurn >= MaxChildrenPerTurn {
		return invalidf("delegation limit exceeded: max_children=%d", MaxChildrenPerTurn)
	}
	if running >= MaxConcurrentChildren {
		return invalidf("delegation limit exceeded: max_concurrent_children=%d", MaxConcurrentChildren)
	}
	return nil
}

// resolveTools turns tools and tool_policy into the child's ToolPolicy
// (nil: every visible tool), checking every named id against the child's
// registry. It also returns the requested selection as recorded.
func (s *Service) resolveTools(ctx context.Context, c *core.Core, req Request) (*effect.ToolPolicy, any, error) {
	all, ids, err := normaliseTools(req.Tools)
	if err != nil {
		return nil, nil, err
	}
	policy, err := parseToolPolicy(req.ToolPolicy)
	if err != nil {
		return nil, nil, err
	}
	visible, hasMCP, err := s.d.VisibleTools(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	known := func(id string) bool {
		return slices.Contains(visible, id) || (hasMCP && strings.Contains(id, "__"))
	}
	for _, id := range ids {
		if !known(id) {
			return nil, nil, invalidf("unknown child tool id: %s", id)
		}
	}
	var requested any = "all"
	if !all {
		// Registry order, as the child will see them.
		exact := make([]string, 0, len(ids))
		for _, v := range visible {
			if slices.Contains(ids, v) {
				exact = append(exact, v)
			}
		}
		for _, id := range ids {
			if !slices.Contains(exact, id) {
				exact = append(exact, id) // MCP-shaped ids, resolved at the child's turn
			}
		}
		if len(ids) == 0 {
			requested = "none"
		} else {
			requested = ids
		}
		if policy == nil {
			policy = &effect.ToolPolicy{}
		}
		if policy.AllowExact != nil {
			exact = slices.DeleteFunc(exact, func(id string) bool { return !slices.Contains(policy.AllowExact, id) })
		}
		policy.AllowExact = exact
	}
	return policy, requested, nil
}

// resolveSlots resolves one phase's selection to slot ids in pipeline
// order; nil means the whole pipeline.
func resolveSlots(c *core.Core, kind string, raw any, def string) ([]string, error) {
	all, ids, err := normaliseSlots(kind, raw)
	if err != nil {
		return nil, err
	}
	if all {
		return nil, nil
	}
	pipeline := c.Slots[kind]
	inPipeline := func(id string) bool {
		return slices.ContainsFunc(pipeline, func(s core.Slot) bool { return s.ID == id })
	}
	if ids == nil {
		// The default keeps only those of its slots the pipeline has.
		ids = []string{def}
		if !inPipeline(def) {
			return []string{}, nil
		}
	}
	for _, id := range ids {
		if _, ok := c.Slot(kind, id); !ok {
			return nil, invalidf("unknown %s slot id: %s", kind, id)
		}
		if !inPipeline(id) {
			return nil, invalidf("%s slot id is not in the active pipeline: %s", kind, id)
		}
	}
	out := make([]string, 0, len(ids))
	for _, s := range pipeline {
		if slices.Contains(ids, s.ID) {
			out = append(out, s.ID)
		}
	}
	return out, nil
}

// forkContext renders the parent's recent model-visible history as one
// system-context instruction (the fork context), "" when there is none.
func (s *Service) forkContext(ctx context.Context, sessionID string) (string, error) {
	msgs, err := s.d.History(ctx, sessionID, forkMessages)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, m := range msgs {
		if !m.Content.ModelVisible || strings.TrimSpace(m.Content.Text) == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %s", m.Role, m.Content.Text))
	}
	if len(lines) == 0 {
		return "", nil
	}
	return "Parent session fork context:\n" + strings.Join(lines, "\n"), nil
}

func slotView(raw any) any {
	if raw == nil {
		return "default"
	}
	return raw
}
