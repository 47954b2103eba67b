package controlplane

import (
	"cmp"
	"context"
	"strings"

	"github.com/demiurge/demiurge"
)

// Task kinds the control plane accepts (spec host-runtime §1.7).
const (
	KindAgentSpawn   = "agent.spawn"
	KindTerminalExec = "terminal.exec"
	KindEvolverRun   = "evolver.run"
	KindScheduleFire = "schedule.fire"
)

// submitAttempts bounds the retries of a submission that lost a race on
// its write scope guard.
const submitAttempts = 8

// TaskSpec is what is to be run.
type TaskSpec struct {
	Kind           string
	Payload        map[string]any // kept whole as the event's action; task_id, parent_task_id, root_task_id, owner_session_id, owner_turn_id, notify_policy are read from it
	IdempotencyKey string         // default "task:<id>:submitted"
}

// Source says who submits a task and from where.
type Source struct {
	Actor     string
	SessionID string
	TurnID    string
	CoreID    string
	TaskID    string // the submitting task, if any: it becomes the parent
	HostID    string
	Metadata  map[string]any
	// WriteScope, when non-empty, is exclusive among active tasks
	// (queued, running, blocked_needs_user).
	WriteScope string
}

// SubmitTask appends task.submitted for a new queued task and returns its
// projection. A repeated idempotency key returns the task of the first
// submission and writes nothing.
func (cp *ControlPlane) SubmitTask(ctx context.Context, spec TaskSpec, src Source) (demiurge.Task, error) {
	if err := checkKind(spec.Kind); err != nil {
		return demiurge.Task{}, err
	}
	id := str(spec.Payload, "task_id")
	if id == "" {
		id = demiurge.NewID("task")
	}
	key := submitKey(spec, id)
	scope := strings.TrimSpace(src.WriteScope)
	ev := cp.submittedEvent(id, spec, src, scope)
	for range submitAttempts {
		tk, err := cp.trySubmit(ctx, id, key, scope, ev)
		if errRace(err) {
			continue // another submission claimed the scope first: look again
		}
		return tk, err
	}
	return demiurge.Task{}, demiurge.Errorf(demiurge.ECONFLICT, "task submission kept losing races: %s", id)
}

// raceError marks a lost guard race, retried by SubmitTask.
type raceError struct{ error }

func errRace(err error) bool {
	_, ok := err.(raceError)
	return ok
}

func (cp *ControlPlane) trySubmit(ctx context.Context, id, key, scope string, ev demiurge.Event) (demiurge.Task, error) {
	events := []demiurge.Event{ev}
	guard := &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: id}
	if existing, err := cp.st.Task(ctx, id); err == nil {
		return cp.replay(ctx, events, key, existing.ID, demiurge.Errorf(demiurge.ECONFLICT, "task already exists: %s", id))
	} else if demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		return demiurge.Task{}, err
	}
	if scope != "" {
		claim, scopeGuard, tk, held, err := cp.claimScope(ctx, id, key, scope, ev)
		if held || err != nil {
			return tk, err
		}
		events, guard = append(events, claim), scopeGuard
	}
	stored, err := cp.st.Append(ctx, events, key, guard)
	if err != nil {
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			return demiurge.Task{}, raceError{err}
		}
		return demiurge.Task{}, err
	}
	return cp.st.Task(ctx, stored[0].AggregateID)
}

// checkKind refuses a kind the control plane does not run.
func checkKind(kind string) error {
	switch kind {
	case KindAgentSpawn, KindTerminalExec, KindEvolverRun, KindScheduleFire:
		return nil
	}
	return demiurge.Errorf(demiurge.EINVALID, "unsupported task kind: %s", kind)
}

// submitKey is the idempotency key of a submission (default
// "task:<id>:submitted").
func submitKey(spec TaskSpec, id string) string {
	if spec.IdempotencyKey != "" {
		return spec.IdempotencyKey
	}
	return "task:" + id + ":submitted"
}

// claimScope prepares the claim of a write scope for task id, submitted
// as sub. When an active task holds the scope, held is set and the answer
// is that of an idempotent replay (the earlier task) or the ECONFLICT
// refusal. Otherwise it returns the claim event and the guard to append
// with: the claim moves the scope aggregate, so of two submissions that
// both saw the scope free only the first one's guard holds.
func (cp *ControlPlane) claimScope(ctx context.Context, id, key, scope string, sub demiurge.Event) (claim demiurge.Event, guard *demiurge.Expected, tk demiurge.Task, held bool, err error) {
	seq, err := cp.st.LastSeq(ctx, demiurge.AggWriteScope, scope)
	if err != nil {
		return claim, nil, tk, false, err
	}
	active, err := cp.activeWithScope(ctx, scope)
	if err != nil {
		return claim, nil, tk, false, err
	}
	if active != "" {
		tk, err = cp.replay(ctx, []demiurge.Event{sub}, key, active,
			demiurge.Errorf(demiurge.ECONFLICT, "background task write_scope is already active: %s", scope))
		return claim, nil, tk, true, err
	}
	// The aggregate whose last seq serializes submissions that claim the
	// same write scope.
	claim = demiurge.NewEvent(demiurge.AggWriteScope, scope, demiurge.TaskWriteScopeClaimedPayload{TaskID: id})
	claim.CreatedAt = sub.CreatedAt
	return claim, &demiurge.Expected{AggregateType: demiurge.AggWriteScope, AggregateID: scope, LastSeq: seq}, tk, false, nil
}

// replay returns the task of an earlier submission with the same
// idempotency key, or refusal when there was none. The append cannot
// write: its guard expects the existing task to have no events.
func (cp *ControlPlane) replay(ctx context.Context, events []demiurge.Event, key, existingID string, refusal error) (demiurge.Task, error) {
	stored, err := cp.st.Append(ctx, events, key, &demiurge.Expected{AggregateType: demiurge.AggTask, AggregateID: existingID})
	if err != nil {
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
			return demiurge.Task{}, refusal
		}
		return demiurge.Task{}, err
	}
	return cp.st.Task(ctx, stored[0].AggregateID)
}

// activeWithScope returns the id of an active task holding scope, "" if
// none. It reads at most MaxTaskLimit tasks per active status.
func (cp *ControlPlane) activeWithScope(ctx context.Context, scope string) (string, error) {
	for _, status := range []string{demiurge.TaskQueued, demiurge.TaskRunning, demiurge.TaskBlocked} {
		tasks, err := cp.st.ListTasks(ctx, demiurge.TaskFilter{Status: status, Limit: demiurge.MaxTaskLimit})
		if err != nil {
			return "", err
		}
		for _, tk := range tasks {
			if s, _ := tk.Source["write_scope"].(string); s == scope {
				return tk.ID, nil
			}
		}
	}
	return "", nil
}

// submittedEvent builds task.submitted with the keys the store projects
// (spec host-runtime §2.1). A top-level task has no parent: a source task
// equal to the task itself is not its parent.
func (cp *ControlPlane) submittedEvent(id string, spec TaskSpec, src Source, scope string) demiurge.Event {
	parent := str(spec.Payload, "parent_task_id")
	if parent == "" && src.TaskID != id {
		parent = src.TaskID
	}
	root := str(spec.Payload, "root_task_id")
	if root == "" {
		root = parent
	}
	if root == "" {
		root = id
	}
	p := demiurge.TaskSubmittedPayload{
		Kind: spec.Kind, Status: demiurge.TaskQueued, RootTaskID: root, ParentTaskID: parent,
		OwnerSessionID: cmp.Or(str(spec.Payload, "owner_session_id"), src.SessionID),
		OwnerTurnID:    cmp.Or(str(spec.Payload, "owner_turn_id"), src.TurnID),
		CoreID:         src.CoreID, HostID: src.HostID, NotifyPolicy: str(spec.Payload, "notify_policy"),
		Source: &demiurge.TaskSource{
			Actor: src.Actor, SessionID: src.SessionID, TurnID: src.TurnID, CoreID: src.CoreID,
			TaskID: src.TaskID, Metadata: orEmpty(src.Metadata), WriteScope: scope,
		},
		Action: orEmpty(spec.Payload),
	}
	ev := demiurge.NewEvent(demiurge.AggTask, id, p)
	ev.CreatedAt, ev.Actor = cp.now(), map[string]any{"actor": src.Actor}
	return ev
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
