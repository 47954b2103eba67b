package host

import (
	"context"
	"slices"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

// The operator's view of the task ledger: every task of the home, of every
// owner and every Host sharing it.

// ListTasks lists tasks newest first: with all, the newest limit tasks of
// any status; without it every active one, each active status read on its
// own, so an old running task is not hidden behind newer finished ones.
func (h *Host) ListTasks(ctx context.Context, all bool, limit int) ([]demiurge.Task, error) {
	if all {
		return h.store.ListTasks(ctx, demiurge.TaskFilter{Limit: limit})
	}
	var out []demiurge.Task
	for _, status := range []string{demiurge.TaskQueued, demiurge.TaskRunning, demiurge.TaskBlocked} {
		ts, err := h.store.ListTasks(ctx, demiurge.TaskFilter{Status: status, Limit: demiurge.MaxTaskLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	slices.SortStableFunc(out, func(a, b demiurge.Task) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

// TaskStatus reads one task with its summary, source and log tail.
func (h *Host) TaskStatus(ctx context.Context, id string) (controlplane.OperatorView, error) {
	return h.control.Operator(ctx, id)
}

// TaskLog reads the newest tail log lines of a task; an unknown task is
// ENOTFOUND.
func (h *Host) TaskLog(ctx context.Context, id string, tail int) ([]controlplane.LogLine, error) {
	if _, err := h.store.Task(ctx, id); err != nil {
		return nil, err
	}
	return h.control.LogTail(ctx, id, tail)
}

// CancelTask cancels a task as the operator; a finished task is returned
// unchanged.
func (h *Host) CancelTask(ctx context.Context, id string) (demiurge.Task, error) {
	return h.tasks.Cancel(ctx, id, "task cancelled by the operator")
}

// WaitTask waits until a task finishes (whichever Host runs it) or ctx
// ends.
func (h *Host) WaitTask(ctx context.Context, id string) (demiurge.Task, error) {
	return h.tasks.Wait(ctx, id)
}
