package controlplane

import (
	"context"

	"github.com/demiurge/demiurge"
)

// maxGroup bounds the batches one group commit writes.
const maxGroup = 1024

// writeReq is one guarded task append waiting for the committer.
type writeReq struct {
	batch demiurge.EventBatch
	done  chan writeRes // capacity 1
}

type writeRes struct {
	stored []demiurge.Event
	task   demiurge.Task
	err    error
}

// appendTask appends one guarded batch of task events and returns the
// stored events with the task's row. While the worker runs, the batch goes
// to the committer, which writes every batch queued at that moment in one
// transaction (group commit): the runs of a busy worker share the
// transaction's fixed cost and the pages it touches. Once the loops have
// stopped it writes directly.
func (w *Worker) appendTask(ctx context.Context, b demiurge.EventBatch) ([]demiurge.Event, demiurge.Task, error) {
	req := &writeReq{batch: b, done: make(chan writeRes, 1)}
	select {
	case w.writes <- req:
		// Taken: the committer answers within its own write timeout.
		res := <-req.done
		return res.stored, res.task, res.err
	case <-w.ctx.Done():
	case <-ctx.Done():
		return nil, demiurge.Task{}, ctxError(ctx, "append task events")
	}
	var res writeRes
	err := w.st.AppendTaskBatches(ctx, []demiurge.EventBatch{b}, func(_ int, stored []demiurge.Event, tk demiurge.Task, err error) {
		res = writeRes{stored, tk, err}
	})
	if err != nil {
		return nil, demiurge.Task{}, err
	}
	return res.stored, res.task, res.err
}

// commitLoop is the committer: it takes one request, gathers every other
// request already waiting (never waiting for more), and writes them all in
// one transaction.
func (w *Worker) commitLoop() {
	defer w.loops.Done()
	for {
		var group []*writeReq
		select {
		case <-w.ctx.Done():
			return
		case req := <-w.writes:
			group = append(group, req)
		}
	gather:
		for len(group) < maxGroup {
			select {
			case req := <-w.writes:
				group = append(group, req)
			default:
				break gather
			}
		}
		batches := make([]demiurge.EventBatch, len(group))
		for i, req := range group {
			batches[i] = req.batch
		}
		ctx, cancel := w.writeCtx()
		err := w.st.AppendTaskBatches(ctx, batches, func(i int, stored []demiurge.Event, tk demiurge.Task, err error) {
			group[i].done <- writeRes{stored, tk, err}
		})
		cancel()
		if err != nil {
			for _, req := range group {
				req.done <- writeRes{err: err}
			}
		}
	}
}
