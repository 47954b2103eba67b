package tasks

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
)

// Background task kinds the model may see (spec host-runtime §1.7).
var backgroundKinds = map[string]bool{"terminal.exec": true, "evolver.run": true, "agent.spawn": true}

// yieldMaxSeconds bounds yield_until below the dispatcher's deadline.
const (
	yieldDefaultSeconds = 30
	yieldMaxSeconds     = 120
)

// Control is the task ledger as the model-facing task tools see it
// (spec host-runtime §6.2). Every method resolves tasks through scope: a
// task of another owner answers exactly like a missing one (ENOTFOUND).
// Views are the bounded model payload: {task_id, kind, status, running,
// started_at, completed_at, summary}, never logs, metadata, owner ids or
// result refs.
type Control interface {
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

// The task tools' arguments and their own checks (spec host-runtime
// §6.2, in the original's order), each "" or the sentence the model sees.
// They run before the task is looked up, and answer for arguments the
// schema refuses.

type taskListArgs struct {
	Kind             string `json:"kind"`
	IncludeCompleted bool   `json:"include_completed"`
}

// taskArgs are the arguments of the tools that name one task.
type taskArgs struct {
	TaskID         string `json:"task_id"`
	Command        string `json:"command"`         // task_control
	TimeoutSeconds int64  `json:"timeout_seconds"` // yield_until
}

// id is the checked task_id argument.
func (a taskArgs) id() string { return strings.TrimSpace(a.TaskID) }

func taskListArgsError(a taskListArgs) string {
	if a.Kind != "" && !backgroundKinds[a.Kind] {
		return fmt.Sprintf("unsupported background task kind: %s", a.Kind)
	}
	return ""
}

func taskIDArgsError(a taskArgs) string {
	if a.id() == "" {
		return "task_id is required"
	}
	return ""
}

// taskControlArgsError checks task_id, then the command (before lookup).
func taskControlArgsError(a taskArgs) string {
	if msg := taskIDArgsError(a); msg != "" {
		return msg
	}
	if cmd := cmp.Or(strings.TrimSpace(a.Command), "cancel"); cmd != "cancel" {
		return fmt.Sprintf("unsupported task_control command: %s", cmd)
	}
	return ""
}

func TaskList(d Deps) effect.Definition {
	return taskTool(d, "task_list", "low",
		"List this session's background tasks (terminal.exec, evolver.run, agent.spawn) with their status.",
		tool.ObjectSchema(map[string]any{
			"kind":              map[string]any{"type": "string", "enum": []any{"terminal.exec", "evolver.run", "agent.spawn"}},
			"include_completed": map[string]any{"type": "boolean", "default": true},
		}),
		taskListArgs{IncludeCompleted: true}, taskListArgsError,
		func(ctx context.Context, tc Control, inv effect.Invocation, a taskListArgs) (any, *effect.Outcome) {
			tasks, err := tc.List(ctx, inv.Turn.Scope, inv.Turn.SessionID, a.Kind, a.IncludeCompleted)
			if err != nil {
				return nil, taskFailure(err, "")
			}
			if tasks == nil {
				tasks = []map[string]any{}
			}
			return map[string]any{"tasks": tasks}, nil
		})
}

func TaskStatus(d Deps) effect.Definition {
	return taskTool(d, "task_status", "low", "Show the status and summary of one background task.",
		tool.ObjectSchema(map[string]any{"task_id": map[string]any{"type": "string"}}, "task_id"),
		taskArgs{}, taskIDArgsError,
		func(ctx context.Context, tc Control, inv effect.Invocation, a taskArgs) (any, *effect.Outcome) {
			view, err := tc.Status(ctx, inv.Turn.Scope, a.id())
			if err != nil {
				return nil, taskFailure(err, a.id())
			}
			return view, nil
		})
}

func TaskControl(d Deps) effect.Definition {
	return taskTool(d, "task_control", "medium", "Control a background task. The only command is cancel.",
		tool.ObjectSchema(map[string]any{
			"task_id": map[string]any{"type": "string"},
			"command": map[string]any{"type": "string", "enum": []any{"cancel"}, "default": "cancel"},
		}, "task_id"),
		taskArgs{}, taskControlArgsError,
		func(ctx context.Context, tc Control, inv effect.Invocation, a taskArgs) (any, *effect.Outcome) {
			view, err := tc.Cancel(ctx, inv.Turn.Scope, a.id())
			if err != nil {
				return nil, taskFailure(err, a.id())
			}
			return view, nil
		})
}

func YieldUntil(d Deps) effect.Definition {
	return taskTool(d, "yield_until", "low",
		"Wait until a background task finishes (or the timeout passes) and return its status. Waiting consumes the task's completion notice.",
		tool.ObjectSchema(map[string]any{
			"task_id":         map[string]any{"type": "string"},
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": yieldMaxSeconds, "default": yieldDefaultSeconds},
		}, "task_id"),
		taskArgs{}, taskIDArgsError,
		func(ctx context.Context, tc Control, inv effect.Invocation, a taskArgs) (any, *effect.Outcome) {
			wait := time.Duration(tool.Positive(a.TimeoutSeconds, yieldDefaultSeconds, yieldMaxSeconds)) * time.Second
			view, timedOut, err := tc.Yield(ctx, inv.Turn.Scope, a.id(), wait)
			if err != nil {
				return nil, taskFailure(err, a.id())
			}
			if timedOut {
				view["timed_out"] = true
			}
			return view, nil
		})
}

// taskTool builds one task tool: capability task.control, auto approval,
// the tool's argument check first, a JSON result shown to the model as is.
func taskTool[A any](d Deps, name, risk, description string, schema map[string]any, defaults A, check func(A) string,
	run func(context.Context, Control, effect.Invocation, A) (any, *effect.Outcome)) effect.Definition {
	return effect.Definition{
		Name:           name,
		Description:    description,
		Schema:         schema,
		Source:         effect.SourceBuiltin,
		Risk:           risk,
		Capability:     "task.control",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter: tool.Simple(defaults, check, func(ctx context.Context, inv effect.Invocation, a A) (effect.Outcome, error) {
			if msg := check(a); msg != "" {
				return tool.Invalid("%s", msg), nil
			}
			if d.Tasks == nil {
				return tool.Unavailable(name, "no task worker is configured"), nil
			}
			v, out := run(ctx, d.Tasks, inv, a)
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
		}),
	}
}

// taskFailure renders a ledger error: a missing or foreign task reads the
// same, other coded errors keep their message, uncoded ones are hidden.
func taskFailure(err error, id string) *effect.Outcome {
	var o effect.Outcome
	switch demiurge.ErrorCode(err) {
	case demiurge.ENOTFOUND:
		o = tool.Invalid("background task not found: %s", id)
	case demiurge.EINTERNAL:
		o = effect.Outcome{Content: "background task request failed"}
	default:
		o = effect.Outcome{Content: demiurge.ErrorMessage(err)}
	}
	o.IsError = true
	return &o
}

// Deps is what the task tools need of the Host.
type Deps struct {
	// Tasks serves task_list, task_status, task_control and yield_until.
	// Without it those tools answer that no task worker is configured.
	Tasks Control
}
