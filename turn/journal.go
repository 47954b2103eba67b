package turn

import (
	"context"

	"github.com/demiurge/demiurge"
)

// A turn writes its events in as few transactions as its guarantees allow:
// one when it is admitted (the session lease and turn.started), one before
// each tool call runs (the events since the last write and
// tool.call.started), and one when it ends (the rest, the terminal event
// and the lease release). Everything in between — the user message,
// assistant steps, a call's completion and its tool message, and each
// delivery with its outcome (delivery.Runtime.Send sends first and leaves
// the record to the turn) — is recorded here and rides with the next of
// those writes.
// Before anything can observe the transcript from outside the engine (a
// slot reading history, a child agent, an effect), the recorded events are
// written first, so nothing sees less than it did when each was its own
// transaction; a crash loses at most what was recorded since the last
// write, with the turn it belongs to (restart recovery marks it lost).

// record queues b for the turn's next write.
func (t *turnRun) record(b demiurge.EventBatch) { t.pending = append(t.pending, b) }

// flush writes what the turn recorded, followed by more, in one
// transaction. Nothing recorded is lost when it fails: the turn's end
// writes it.
func (t *turnRun) flush(ctx context.Context, more ...demiurge.EventBatch) error {
	batches := append(t.pending[:len(t.pending):len(t.pending)], more...)
	if len(batches) == 0 {
		return nil
	}
	if _, err := t.x.d.Store.AppendBatches(ctx, batches); err != nil {
		return err
	}
	t.pending = nil
	return nil
}
