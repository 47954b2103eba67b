package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// Background task kinds the model may see (spec host-runtime §1.7).
var backgroundKinds = map[string]bool{"terminal.exec": true, "evolver.run": true, "agent.spawn": true}

// yieldMaxSeconds bounds yield_until below the dispatcher's deadline.
const (
	yieldDefaultSeconds = 30
	yieldMaxSeconds     = 120
)

// TaskControl is the task ledger as the model-facing task tools see it
// (spec host-runtime §6.2). Every method resolves tasks through scope: a
// task of another owner answers exactly like a missing one (ENOTFOUND).
// Views are the bounded model payload: {task_id, kind, status, running,
// started_at, completed_at, summary}, never logs, metadata, owner ids or
// result refs.
type TaskControl interface {
	// List returns the background tasks of sessionID, oldest first, of
	// kind ("" for all background kinds).
	List(ctx context.Context, scope demiurge.PrincipalScope, sessionID, kind string, includeCompleted bool) ([]map[string]any, error)
	// Status returns one task.
	Status(ctx context.Context, scope demiurge.PrincipalScope, id string) (map[string]any, error)
	// Cancel cancels one task (single-flight; a finished task is returned
	// unchanged).
	Cancel(ctx context.Context, scope demiurge.PrincipalScope, id string) (map[string]any, error)
	// Yield waits up to timeout for the task to reach a completion status
	// and consumes its completion notification when it does.
	Yield(ctx context.Context, scope demiurge.PrincipalScope, id string, timeout time.Duration) (view map[string]any, timedOut bool, err error)
}

// The task tools' own argument checks (spec host-runtime §6.2, in the
// original's order), each "" or the sentence the model sees. They run
// before the task is looked up, and answer for arguments the schema
// refuses.

func taskListArgsError(args map[string]any) string {
	if kind := stringArg(args, "kind"); kind != "" && !backgroundKinds[kind] {
		return fmt.Sprintf("unsupported background task kind: %s", kind)
	}
	return ""
}

func taskIDArgsError(args map[string]any) string {
	if strings.TrimSpace(stringArg(args, "task_id")) == "" {
		return "task_id is required"
	}
	return ""
}

// taskControlArgsError checks task_id, then the command (before lookup).
func taskControlArgsError(args map[string]any) string {
	if msg := taskIDArgsError(args); msg != "" {
		return msg
	}
	if cmd := orDefault(strings.TrimSpace(stringArg(args, "command")), "cancel"); cmd != "cancel" {
		return fmt.Sprintf("unsupported task_control command: %s", cmd)
	}
	return ""
}

func taskList(d Deps) effect.Definition {
	return taskTool(d, "task_list", "low",
		"List this session's background tasks (terminal.exec, evolver.run, agent.spawn) with their status.",
		objectSchema(map[string]any{
			"kind":              map[string]any{"type": "string", "enum": []any{"terminal.exec", "evolver.run", "agent.spawn"}},
			"include_completed": map[string]any{"type": "boolean", "default": true},
		}),
		taskListArgsError,
		func(ctx context.Context, tc TaskControl, inv effect.Invocation) (any, *effect.Outcome) {
			kind := stringArg(inv.Args, "kind")
			tasks, err := tc.List(ctx, inv.Turn.Scope, inv.Turn.SessionID, kind, boolArg(inv.Args, "include_completed", true))
			if err != nil {
				return nil, taskFailure(err, "")
			}
			if tasks == nil {
				tasks = []map[string]any{}
			}
			return map[string]any{"tasks": tasks}, nil
		})
}

func taskStatus(d Deps) effect.Definition {
	return taskTool(d, "task_status", "low", "Show the status and summary of one background task.",
		objectSchema(map[string]any{"task_id": map[string]any{"type": "string"}}, "task_id"),
		taskIDArgsError,
		func(ctx context.Context, tc TaskControl, inv effect.Invocation) (any, *effect.Outcome) {
			id := taskID(inv)
			view, err := tc.Status(ctx, inv.Turn.Scope, id)
			if err != nil {
				return nil, taskFailure(err, id)
			}
			return view, nil
		})
}

func taskControl(d Deps) effect.Definition {
	return taskTool(d, "task_control", "medium", "Control a background task. The only command is cancel.",
		objectSchema(map[string]any{
			"task_id": map[string]any{"type": "string"},
			"command": map[string]any{"type": "string", "enum": []any{"cancel"}, "default": "cancel"},
		}, "task_id"),
		taskControlArgsError,
		func(ctx context.Context, tc TaskControl, inv effect.Invocation) (any, *effect.Outcome) {
			id := taskID(inv)
			view, err := tc.Cancel(ctx, inv.Turn.Scope, id)
			if err != nil {
				return nil, taskFailure(err, id)
			}
			return view, nil
		})
}

func yieldUntil(d Deps) effect.Definition {
	return taskTool(d, "yield_until", "low",
		"Wait until a background task finishes (or the timeout passes) and return its status. Waiting consumes the task's completion notice.",
		objectSchema(map[string]any{
			"task_id":         map[string]any{"type": "string"},
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": yieldMaxSeconds, "default": yieldDefaultSeconds},
		}, "task_id"),
		taskIDArgsError,
		func(ctx context.Context, tc TaskControl, inv effect.Invocation) (any, *effect.Outcome) {
			id := taskID(inv)
			wait := time.Duration(positiveInt(inv.Args, "timeout_seconds", yieldDefaultSeconds, yieldMaxSeconds)) * time.Second
			view, timedOut, err := tc.Yield(ctx, inv.Turn.Scope, id, wait)
			if err != nil {
				return nil, taskFailure(err, id)
			}
			if timedOut {
				view["timed_out"] = true
			}
			return view, nil
		})
}

// taskTool builds one task tool: capability task.control, auto approval,
// the tool's argument check first, a JSON result shown to the model as is.
func taskTool(d Deps, name, risk, description string, schema map[string]any, check func(map[string]any) string,
	run func(context.Context, TaskControl, effect.Invocation) (any, *effect.Outcome)) effect.Definition {
	return effect.Definition{
		Name:           name,
		Description:    description,
		Schema:         schema,
		Source:         effect.SourceBuiltin,
		Risk:           risk,
		Capability:     "task.control",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter: checkedAdapter{check: check, AdapterFunc: func(ctx context.Context, inv effect.Invocation) (effect.Outcome, error) {
			if msg := check(inv.Args); msg != "" {
				return invalid("%s", msg), nil
			}
			if d.Tasks == nil {
				return unavailable(name, "no task worker is configured"), nil
			}
			v, out := run(ctx, d.Tasks, inv)
			if out != nil {
				out.IsError = true
				return *out, nil
			}
			body, err := json.Marshal(v)
			if err != nil {
				return effect.Outcome{}, err
			}
			data, _ := v.(map[string]any)
			return effect.Outcome{Content: string(body), Data: data, ExecutionStarted: true}, nil
		}},
	}
}

// taskID is the checked task_id argument.
func taskID(inv effect.Invocation) string { return strings.TrimSpace(stringArg(inv.Args, "task_id")) }

// taskFailure renders a ledger error: a missing or foreign task reads the
// same, other coded errors keep their message, uncoded ones are hidden.
func taskFailure(err error, id string) *effect.Outcome {
	var o effect.Outcome
	switch demiurge.ErrorCode(err) {
	case demiurge.ENOTFOUND:
		o = invalid("background task not found: %s", id)
	case demiurge.EINTERNAL:
		o = effect.Outcome{Content: "background task request failed"}
	default:
		o = effect.Outcome{Content: demiurge.ErrorMessage(err)}
	}
	o.IsError = true
	return &o
}
