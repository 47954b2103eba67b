package demiurge

import (
	"bytes"
	"encoding/json"
)

// EventPayload is the typed payload of one event type: a struct whose JSON
// form is the event's payload object, and whose Type names the event type
// it belongs to. Every event type has exactly one (EventPayloads), so
// writers and readers share the one definition of its keys.
type EventPayload interface {
	Type() string
}

// NewEvent returns the event of type p.Type() on the aggregate (aggType,
// aggID) with p encoded as its Payload: compact JSON without HTML escaping
// (map keys sorted, struct fields in declaration order). A payload that
// cannot be encoded (a value JSON has no form for, in a free-form map)
// gives an event that the store refuses (EncodeErr).
func NewEvent(aggType, aggID string, p EventPayload) Event {
	body, err := encodePayload(p)
	return Event{AggregateType: aggType, AggregateID: aggID, Type: p.Type(), Payload: body, body: p, encodeErr: err}
}

// Body returns the payload value NewEvent encoded, nil for an event built
// otherwise or read from the store. The store projects it without decoding
// the Payload again, so the two must agree: build a new event rather than
// edit the Payload of one. Readers of stored events use Decode.
func (e Event) Body() EventPayload { return e.body }

// EncodeErr reports why NewEvent could not encode the event's payload, nil
// when it could (or the event was built otherwise).
func (e Event) EncodeErr() error { return e.encodeErr }

// Decode decodes the payload into v, a pointer to the payload struct of
// the event's type (or of its family, such as TaskChange for the task
// transitions). An empty payload leaves v as it is. It fails with EINVALID
// when the payload is not JSON of v's shape.
func (e Event) Decode(v any) error {
	if len(e.Payload) == 0 {
		return nil
	}
	if err := json.Unmarshal(e.Payload, v); err != nil {
		return WrapError(EINVALID, err, "event %s %s/%s: payload does not decode", e.Type, e.AggregateType, e.AggregateID)
	}
	return nil
}

// DecodePayload decodes the payload of e as T, the payload struct of e's
// type. It fails with EINVALID when e is of another type or its payload
// does not decode.
func DecodePayload[T EventPayload](e Event) (T, error) {
	var p T
	if e.Type != p.Type() {
		return p, Errorf(EINVALID, "event %s %s/%s is not a %s event", e.Type, e.AggregateType, e.AggregateID, p.Type())
	}
	err := e.Decode(&p)
	return p, err
}

// encodePayload is json.Marshal without HTML escaping: payloads hold
// commands and markup that are stored, not embedded in HTML.
func encodePayload(p EventPayload) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, WrapError(EINVALID, err, "event %s payload is not JSON-encodable", p.Type())
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// notOfFamily is the error of a family's As for a type outside it.
func notOfFamily(typ, family string) error {
	return Errorf(EINVALID, "event type %s is not a %s event", typ, family)
}
