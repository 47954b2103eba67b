package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// evMeta is what a projector sees of its event besides the payload: the
// payload reaches it only decoded into its struct, so a projector cannot
// read a key the struct does not define.
type evMeta struct {
	typ   string
	aggID string
	seq   int64
	at    time.Time
}

// stamp is the event's own time in storage form.
func (e evMeta) stamp() string { return demiurge.FormatTime(e.at) }

// projection applies one event to the projection tables inside the append
// transaction. It must be idempotent enough to re-apply the same facts.
type projection struct {
	payload reflect.Type // the struct the payload decodes into
	apply   func(t *wtx, e evMeta, body demiurge.EventPayload, raw json.RawMessage) error
}

// projectors maps event types to their projection (doc.go has the table).
// Event types not listed here are stored without a projection.
var projectors = map[string]projection{}

// on registers fn as the projection of P's event type.
func on[P demiurge.EventPayload](fn func(t *wtx, e evMeta, p P) error) {
	var zero P
	register(zero.Type(), reflect.TypeOf(zero), fn)
}

// onFamily registers fn as the projection of each member's event type.
// The members are named types over the family payload B, so each payload
// decodes into B as it would into its own struct; registration fails when
// a member is not such a type.
func onFamily[B any](fn func(t *wtx, e evMeta, b B) error, members ...demiurge.EventPayload) {
	base := reflect.TypeFor[B]()
	for _, m := range members {
		rt := reflect.TypeOf(m)
		if rt.Kind() != reflect.Struct || !rt.ConvertibleTo(base) {
			panic("store: " + rt.String() + " is not a payload of the " + base.String() + " family")
		}
		register(m.Type(), rt, fn)
	}
}

// register records fn as the projection of typ, whose payload struct is
// payload, a type convertible to B. An event NewEvent built hands over the
// value it encoded (the same facts its JSON holds, without decoding it
// again); any other event's payload is decoded into B.
func register[B any](typ string, payload reflect.Type, fn func(t *wtx, e evMeta, b B) error) {
	if _, dup := projectors[typ]; dup {
		panic("store: two projections of " + typ)
	}
	base := reflect.TypeFor[B]()
	projectors[typ] = projection{payload: payload, apply: func(t *wtx, e evMeta, body demiurge.EventPayload, raw json.RawMessage) error {
		switch v := body.(type) {
		case B:
			return fn(t, e, v)
		case nil:
		default:
			if reflect.TypeOf(v) == payload {
				return fn(t, e, reflect.ValueOf(v).Convert(base).Interface().(B))
			}
		}
		var b B
		if err := json.Unmarshal(raw, &b); err != nil {
			return demiurge.WrapError(demiurge.EINVALID, err, "event %s %s: the payload does not decode", e.typ, e.aggID)
		}
		return fn(t, e, b)
	}}
}

func (t *wtx) project(e *demiurge.Event) error {
	p, ok := projectors[e.Type]
	if !ok {
		return nil
	}
	if len(t.sessionOrder) > 0 && strings.HasPrefix(e.Type, "session.") {
		if err := t.flushSessions(); err != nil {
			return err
		}
	}
	meta := evMeta{typ: e.Type, aggID: e.AggregateID, seq: e.Seq, at: e.CreatedAt}
	if err := p.apply(t, meta, e.Body(), e.Payload); err != nil {
		var coded *demiurge.Error
		if errors.As(err, &coded) || isBusy(err) || t.ctx.Err() != nil {
			return err // already explained, retryable, or cancelled
		}
		return demiurge.WrapError(demiurge.EINTERNAL, err, "project %s %s/%s", e.Type, e.AggregateType, e.AggregateID)
	}
	return nil
}

// suffix returns the part of an event type after its last '.'
// ("task.succeeded" → "succeeded").
func suffix(typ string) string {
	return typ[strings.LastIndexByte(typ, '.')+1:]
}
