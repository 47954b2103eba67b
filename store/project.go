package store

import (
	"errors"
	"strings"

	"github.com/demiurge/demiurge"
)

// projector applies one event to the projection tables inside the append
// transaction. It must be idempotent enough to re-apply the same facts.
type projector func(t *wtx, e *demiurge.Event, p payload) error

// projectors maps event types to their projection (doc.go has the table).
// Event types not listed here are stored without a projection.
var projectors = map[string]projector{}

func register(fn projector, types ...string) {
	for _, typ := range types {
		projectors[typ] = fn
	}
}

func (t *wtx) project(e *demiurge.Event) error {
	fn := projectors[e.Type]
	if fn == nil {
		return nil
	}
	if len(t.sessionOrder) > 0 && strings.HasPrefix(e.Type, "session.") {
		if err := t.flushSessions(); err != nil {
			return err
		}
	}
	if err := fn(t, e, payload(e.Payload)); err != nil {
		var coded *demiurge.Error
		if errors.As(err, &coded) || isBusy(err) || t.ctx.Err() != nil {
			return err // already explained, retryable, or cancelled
		}
		return demiurge.WrapError(demiurge.EINTERNAL, err, "project %s %s/%s: %v", e.Type, e.AggregateType, e.AggregateID, err)
	}
	return nil
}

// suffix returns the part of an event type after its last '.'
// ("task.succeeded" → "succeeded").
func suffix(typ string) string {
	return typ[strings.LastIndexByte(typ, '.')+1:]
}

// eventTime is the event's own time in storage form.
func eventTime(e *demiurge.Event) string { return demiurge.FormatTime(e.CreatedAt) }
