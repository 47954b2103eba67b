package delegation

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// ChildTurn is one child agent turn to run.
type ChildTurn struct {
	TaskID          string
	Goal            string
	CoreID          string
	SessionID       string // chosen at submission; the child session gets this id
	Depth           int
	ParentSessionID string
	ParentTurnID    string
	ParentScope     demiurge.PrincipalScope
	ParentSlot      string
	Workspace       string
	// InputSlots and OutputSlots are resolved slot ids (nil: the whole
	// pipeline).
	InputSlots, OutputSlots []string
	UseBootstrap            bool
	ToolPolicy              *effect.ToolPolicy
	SystemContext           string
}

// Scope is the child's principal scope: a delegated agent owning only its
// own session, with the parent's session and turn as its origin.
func (c ChildTurn) Scope() demiurge.PrincipalScope {
	return demiurge.PrincipalScope{
		PrincipalID:       "principal:delegated_agent:" + c.ParentScope.PrincipalID + ":" + c.TaskID,
		Authority:         demiurge.AuthorityDelegatedAgent,
		SessionID:         c.SessionID,
		AllowedSessionIDs: []string{c.SessionID},
		OriginSessionID:   c.ParentSessionID,
		OriginTurnID:      c.ParentTurnID,
	}
}

// ChildResult is how a child turn ended.
type ChildResult struct {
	SessionID  string
	TurnID     string
	Outcome    demiurge.TurnStatus
	Text       string
	Deliveries []string // delivered texts, in order
	NeedsUser  bool
	Error      string
	// For ctx.agents.run: the child's ctx.result value, its deliveries
	// and its tool calls.
	Result any
	Items  []ChildDelivery
	Tools  []ChildTool
}

// ChildDelivery is one delivery of a child turn.
type ChildDelivery struct {
	Kind, Text, HistoryPolicy string
	Visible                   bool
}

// ChildTool is one tool call of a child turn, as its model saw the result.
type ChildTool struct {
	Name, Content string
	IsError       bool
}

// ChildRunner runs one child turn (the Host's turn engine).
type ChildRunner func(ctx context.Context, c ChildTurn) (ChildResult, error)

// TaskLog is the part of a running task's handle Run uses: the task's log.
// The task worker's handle satisfies it.
type TaskLog interface {
	Log(stream, text string)
}

// Run is the agent.spawn task body.
func (s *Service) Run(ctx context.Context, task demiurge.Task, h TaskLog) (demiurge.TaskResult, error) {
	c, ok := s.take(task.ID)
	if !ok {
		return demiurge.TaskResult{}, demiurge.Errorf(demiurge.EUNAVAILABLE, "child agent is no longer available to this Host")
	}
	h.Log("stdout", fmt.Sprintf("child agent %s started in session %s", c.CoreID, c.SessionID))
	res, err := s.d.RunChild(ctx, c)
	trail := demiurge.AgentSpawnTrail{TaskID: task.ID, ParentSessionID: c.ParentSessionID, ParentTurnID: c.ParentTurnID,
		ChildCoreID: c.CoreID, ChildSessionID: c.SessionID}
	if err != nil {
		trail.Error = errorText(err)
		s.audit(ctx, demiurge.EvAgentSpawnFailed, task.ID, trail)
		return demiurge.TaskResult{}, err
	}
	trail.ChildTurnID, trail.ChildOutcome = res.TurnID, res.Outcome
	defer func() {
		typ := demiurge.EvAgentSpawnCompleted
		switch {
		case res.Outcome == demiurge.TurnNeedsUser:
			typ = demiurge.EvAgentSpawnBlocked
		case res.Outcome != demiurge.TurnCompleted:
			typ = demiurge.EvAgentSpawnFailed
		}
		s.audit(ctx, typ, task.ID, trail)
	}()
	summary := cmp.Or(strings.Join(nonEmpty(res.Deliveries), "\n\n"), res.Text, fmt.Sprintf("child agent %s completed", c.CoreID))
	out := demiurge.TaskResult{
		Summary:   summary,
		ResultRef: fmt.Sprintf("session:%s:%s", res.SessionID, res.TurnID),
		Metadata: map[string]any{
			"child_turn_id": res.TurnID, "child_session_id": res.SessionID, "child_outcome": string(res.Outcome),
			"needs_user": res.NeedsUser,
			"resolved_child_agent_slots": map[string]any{
				"input_slots": slotIDs(c.InputSlots), "output_slots": slotIDs(c.OutputSlots), "use_bootstrap": c.UseBootstrap,
			},
			"resolved_child_agent_tools": toolView(c.ToolPolicy),
		},
	}
	switch res.Outcome {
	case demiurge.TurnCompleted:
	case demiurge.TurnNeedsUser:
		// The child waits on the user: the task stays blocked_needs_user
		// and the parent is told so.
		out.Blocked = true
	case demiurge.TurnCancelled:
		return out, demiurge.Errorf(demiurge.ECANCELED, "child agent turn cancelled")
	default:
		out.Failed = true
		out.Error = "child agent turn " + string(res.Outcome)
		if res.Error != "" {
			out.Error += ": " + res.Error
		}
	}
	return out, nil
}

func nonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

func slotIDs(ids []string) any {
	if ids == nil {
		return "all"
	}
	return ids
}

func toolView(p *effect.ToolPolicy) any {
	if p == nil || p.AllowExact == nil {
		return "all"
	}
	return p.AllowExact
}
