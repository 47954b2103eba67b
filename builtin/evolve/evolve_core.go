package evolve

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// Evolution is the core repository as evolve_core and rollback_core
// see it. The Host implements it; results are JSON-ready values.
type Evolution interface {
	// Start runs an evolve start of coreID in the foreground.
	Start(ctx context.Context, tc effect.TurnContext, coreID, goal string) (any, error)
	// StartBackground submits an evolver.run task and returns its id.
	StartBackground(ctx context.Context, tc effect.TurnContext, coreID, goal string, notify bool) (string, error)
	// Review reviews a run; passed says whether every gate passed.
	Review(ctx context.Context, runID, reason string) (result any, passed bool, err error)
	// Promote promotes a reviewed run without any operator token: a
	// proposal that needs manual review is refused (promoted false).
	Promote(ctx context.Context, runID, reason string) (result any, promoted bool, err error)
	// Discard removes a run.
	Discard(ctx context.Context, runID string) error
	// Rollback commits the target's tree as a new live revision and
	// returns that revision.
	Rollback(ctx context.Context, target, reason string) (string, error)
}

var evolveActions = map[string]bool{"start": true, "review": true, "promote": true, "discard": true}

func EvolveCore(d Deps) effect.Definition {
	return effect.Definition{
		Name: "evolve_core",
		Description: "Propose a change to this Agent Core in an isolated run and move it through review: " +
			"start (the evolver edits a copy of the live core), review (gates), promote (make it live), discard. " +
			"Promotion of a proposal that changes MCP servers or loosens approval needs the operator, outside the agent.",
		Schema: tool.ObjectSchema(map[string]any{
			"action":             map[string]any{"type": "string", "enum": []any{"start", "review", "promote", "discard"}, "default": "start"},
			"goal":               map[string]any{"type": "string", "description": "start: what the change should achieve."},
			"run_id":             map[string]any{"type": "string", "description": "review, promote, discard: the evolve run."},
			"background":         map[string]any{"type": "boolean", "default": false, "description": "start: run as an evolver.run task."},
			"notify_on_complete": map[string]any{"type": "boolean", "default": true},
			"reason":             map[string]any{"type": "string"},
		}),
		Source:         effect.SourceBuiltin,
		Risk:           "high",
		Capability:     "tool.call:evolve_core",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter:        evolveTool(d),
	}
}

type evolveArgs struct {
	Action           string `json:"action"`
	Goal             string `json:"goal"`
	RunID            string `json:"run_id"`
	Background       bool   `json:"background"`
	NotifyOnComplete bool   `json:"notify_on_complete"`
	Reason           string `json:"reason"`
}

// check reads the call; a non-empty message refuses it.
func (a evolveArgs) check() (action, target, msg string) {
	action = cmp.Or(strings.TrimSpace(a.Action), "start")
	if !evolveActions[action] {
		return action, "", "unsupported evolve_core action: " + action
	}
	if action == "start" {
		if strings.TrimSpace(a.Goal) == "" {
			return action, "", "goal is required for evolve_core start"
		}
		return action, "", ""
	}
	target = strings.TrimSpace(a.RunID)
	if target == "" {
		return action, "", "run_id is required for evolve_core " + action
	}
	return action, target, ""
}

func evolveArgsError(a evolveArgs) string {
	_, _, msg := a.check()
	return msg
}

// evolveTool refuses a call before approval when the arguments do not
// name a complete action or no repository is configured.
func evolveTool(d Deps) effect.Adapter {
	return tool.Typed[evolveArgs]{
		Defaults: evolveArgs{NotifyOnComplete: true}, Check: evolveArgsError,
		Call: func(_ context.Context, inv effect.Invocation, a evolveArgs) (effect.Call, *effect.Outcome) {
			action, runID, msg := a.check()
			if msg != "" {
				return tool.Refuse(tool.Invalid("%s", msg))
			}
			if d.Evolution == nil {
				return tool.Refuse(tool.Unavailable("evolve_core", "no core repository is configured"))
			}
			return &evolveCall{ev: d.Evolution, turn: inv.Turn, args: a, action: action, runID: runID}, nil
		},
	}
}

// evolveCall is a checked evolve_core call.
type evolveCall struct {
	ev     Evolution
	turn   effect.TurnContext
	args   evolveArgs
	action string
	runID  string // the run of review, promote and discard
}

// ApprovalFacts approves each action separately: the action and its
// target (the core for start, the run otherwise) are in the rule key, and
// a promotion is never remembered for the session.
func (c *evolveCall) ApprovalFacts() effect.ApprovalFacts {
	target := c.runID
	if c.action == "start" {
		target = c.turn.CoreID
	}
	return effect.ApprovalFacts{
		Action:   "evolve_core." + c.action,
		Target:   target,
		Summary:  "evolve_core " + c.action + " " + target,
		RuleKey:  effect.RuleKey("evolve_core:" + c.action + ":" + target),
		Baseline: policy.Prompt,
		OneShot:  c.action == "promote",
	}
}

func (c *evolveCall) Run(ctx context.Context) (effect.Outcome, error) {
	ev, reason, runID, tc := c.ev, c.args.Reason, c.runID, c.turn
	var (
		result  any
		isError bool
		err     error
	)
	switch c.action {
	case "start":
		if c.args.Background {
			var id string
			id, err = ev.StartBackground(ctx, tc, tc.CoreID, c.args.Goal, c.args.NotifyOnComplete)
			result = map[string]any{"task_id": id}
		} else {
			result, err = ev.Start(ctx, tc, tc.CoreID, c.args.Goal)
		}
	case "review":
		var passed bool
		result, passed, err = ev.Review(ctx, runID, reason)
		isError = !passed
	case "promote":
		var promoted bool
		result, promoted, err = ev.Promote(ctx, runID, reason)
		isError = !promoted
	case "discard":
		err = ev.Discard(ctx, runID)
		result = map[string]any{"run_id": runID, "discarded": err == nil}
	}
	if err != nil {
		return effect.Outcome{IsError: true, ExecutionStarted: true, Content: coreErrorText(err)}, nil
	}
	return jsonOutcome(result, isError)
}

type rollbackArgs struct {
	Target string `json:"target"`
	Reason string `json:"reason"`
}

func RollbackCore(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "rollback_core",
		Description: "Roll the Agent Cores back to an earlier revision (default: the previous live one). Takes effect at the next turn.",
		Schema: tool.ObjectSchema(map[string]any{
			"target": map[string]any{"type": "string", "default": "previous", "description": "previous, or a revision (hash prefix)."},
			"reason": map[string]any{"type": "string"},
		}),
		Source:         effect.SourceBuiltin,
		Risk:           "high",
		Capability:     "tool.call:rollback_core",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter: tool.Simple(rollbackArgs{}, nil, func(ctx context.Context, _ effect.Invocation, a rollbackArgs) (effect.Outcome, error) {
			if d.Evolution == nil {
				return tool.Unavailable("rollback_core", "no core repository is configured"), nil
			}
			target := cmp.Or(strings.TrimSpace(a.Target), "previous")
			rev, err := d.Evolution.Rollback(ctx, target, a.Reason)
			if err != nil {
				return effect.Outcome{IsError: true, ExecutionStarted: true, Content: coreErrorText(err)}, nil
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			return effect.Outcome{Content: "rollback committed: " + rev + " (takes effect next turn)", ExecutionStarted: true,
				Data: map[string]any{"revision": rev}}, nil
		}),
	}
}

// jsonOutcome renders a JSON-ready result as the tool's content.
func jsonOutcome(v any, isError bool) (effect.Outcome, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return effect.Outcome{}, err
	}
	var data map[string]any
	_ = json.Unmarshal(body, &data)
	return effect.Outcome{Content: string(body), Data: data, IsError: isError, ExecutionStarted: true}, nil
}

// coreErrorText is a repository error as the model sees it: coded
// messages are written for it, uncoded ones are hidden.
func coreErrorText(err error) string {
	if demiurge.ErrorCode(err) == demiurge.EINTERNAL {
		return "core repository operation failed"
	}
	return demiurge.ErrorMessage(err)
}

// Deps is what evolve_core and rollback_core need of the Host.
type Deps struct {
	// Evolution serves both tools. Without it they answer that no core
	// repository is configured.
	Evolution Evolution
}
