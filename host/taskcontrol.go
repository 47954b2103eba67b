package host

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/tasks"
	"github.com/demiurge/demiurge/controlplane"
)

// backgroundKinds are the task kinds the model-facing tools see: schedule
// firings are never the model's business.
var backgroundKinds = []string{demiurge.TaskKindTerminalExec, demiurge.TaskKindEvolverRun, demiurge.TaskKindAgentSpawn}

// taskControl serves the model-facing task tools over the control plane
// and the worker. Every read goes through the caller's scope and the
// caller's session: a task of another session, another owner, or a kind
// the model may not see is "not found", exactly like a missing one.
type taskControl struct{ h *Host }

var _ tasks.Control = taskControl{}

func (c taskControl) owned(ctx context.Context, scope demiurge.PrincipalScope, id string) (demiurge.Task, error) {
	t, err := c.h.control.Get(ctx, scope, id)
	if err != nil {
		return t, err
	}
	if !slices.Contains(backgroundKinds, t.Kind) || (scope.SessionID != "" && t.OwnerSessionID != scope.SessionID) {
		return demiurge.Task{}, demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", id)
	}
	return t, nil
}

func (c taskControl) view(ctx context.Context, t demiurge.Task) (map[string]any, error) {
	summary, err := c.h.control.Summary(ctx, t)
	if err != nil {
		return nil, err
	}
	return controlplane.Model(t, summary), nil
}

func (c taskControl) List(ctx context.Context, scope demiurge.PrincipalScope, sessionID, kind string, includeCompleted bool) ([]map[string]any, error) {
	if sessionID == "" || (scope.Authority != demiurge.AuthorityOperator && !scope.Allows(sessionID)) {
		return nil, nil
	}
	tasks, err := c.h.store.ListTasks(ctx, demiurge.TaskFilter{OwnerSessionID: sessionID, Kind: kind, Limit: demiurge.MaxTaskLimit})
	if err != nil {
		return nil, err
	}
	slices.Reverse(tasks) // oldest first
	var out []map[string]any
	for _, t := range tasks {
		if !slices.Contains(backgroundKinds, t.Kind) || (!includeCompleted && !demiurge.TaskActive(t.Status)) {
			continue
		}
		v, err := c.view(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (c taskControl) Status(ctx context.Context, scope demiurge.PrincipalScope, id string) (map[string]any, error) {
	t, err := c.owned(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	return c.view(ctx, t)
}

func (c taskControl) Cancel(ctx context.Context, scope demiurge.PrincipalScope, id string) (map[string]any, error) {
	if _, err := c.owned(ctx, scope, id); err != nil {
		return nil, err
	}
	t, err := c.h.tasks.Cancel(ctx, id, "task cancelled")
	if err != nil {
		return nil, err
	}
	return c.view(ctx, t)
}

func (c taskControl) Yield(ctx context.Context, scope demiurge.PrincipalScope, id string, timeout time.Duration) (map[string]any, bool, error) {
	t, err := c.owned(ctx, scope, id)
	if err != nil {
		return nil, false, err
	}
	if demiurge.TaskTerminal(t.Status) || t.Status == demiurge.TaskBlocked {
		// Already in a completion status: nothing to wait for; the caller
		// takes the result, so the notice is consumed.
		if cerr := c.h.tasks.ConsumeCompletion(ctx, id); cerr != nil {
			c.h.logger.Warn("consume task completion", "task_id", id, "err", cerr)
		}
		v, err := c.view(ctx, t)
		return v, false, err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The caller takes the result: the completion notice is consumed so
	// the session does not get it a second time.
	t, _, err = c.h.tasks.WaitConsume(wctx, id)
	timedOut := false
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case errors.Is(wctx.Err(), context.DeadlineExceeded):
		timedOut = true
		if t, err = c.h.store.Task(ctx, id); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, err
	}
	v, err := c.view(ctx, t)
	return v, timedOut, err
}
