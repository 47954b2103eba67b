package store

import (
	"context"

	"github.com/demiurge/demiurge"
)

// AppendBatches appends several batches in ONE write transaction, each as
// Append would (its own idempotency key and Expected guard), and returns
// the stored events of each. It is all or nothing: a failing batch (a
// guard that does not match: ECONFLICT) fails the call and nothing of any
// batch is written. Empty batches are skipped. This is the unit of work of
// a turn: the events it produced since its last write go together.
func (db *DB) AppendBatches(ctx context.Context, batches []demiurge.EventBatch) ([][]demiurge.Event, error) {
	if countEvents(batches) == 0 {
		return make([][]demiurge.Event, len(batches)), nil
	}
	var out [][]demiurge.Event
	err := db.write(ctx, func(t *wtx) error {
		var err error
		out, err = t.appendBatches(batches)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendBatches is AppendBatches inside an open write transaction.
func (t *wtx) appendBatches(batches []demiurge.EventBatch) ([][]demiurge.Event, error) {
	out := make([][]demiurge.Event, len(batches))
	for i, b := range batches {
		stored, err := t.append(b.Events, b.IdempotencyKey, b.Expected)
		if err != nil {
			return nil, err
		}
		out[i] = stored
	}
	return out, nil
}

func countEvents(batches []demiurge.EventBatch) int {
	n := 0
	for _, b := range batches {
		n += len(b.Events)
	}
	return n
}
