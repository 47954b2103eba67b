package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/demiurge/demiurge"
)

var (
	sqlInsertEvent = `INSERT INTO runtime_events
  (event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idempotency_key)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlEventsByKey = `SELECT seq, event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idempotency_key
  FROM runtime_events WHERE idempotency_key = ? ORDER BY seq`
	sqlLastSeq = `SELECT COALESCE(MAX(seq), 0) FROM runtime_events WHERE aggregate_type = ? AND aggregate_id = ?`
)

// Append writes events as one batch and returns
// them with Seq, EventID and CreatedAt filled in.
//
//   - An empty batch is a no-op.
//   - If idempotencyKey is given and an event with that key exists, the
//     stored events of that earlier batch are returned unchanged and nothing
//     is written, even if the new batch differs.
//   - If expected is given and the newest seq of its aggregate differs from
//     expected.LastSeq, Append fails with ECONFLICT
//     "runtime aggregate changed: expected X, got Y".
//   - Each event is inserted and its projection applied in the same
//     transaction; every event of the batch carries idempotencyKey.
//
// Events with an empty AggregateType, AggregateID or Type fail with EINVALID.
// Append is safe for concurrent use, also across processes.
func (db *DB) Append(ctx context.Context, events []demiurge.Event, idempotencyKey string, expected *demiurge.Expected) ([]demiurge.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	var out []demiurge.Event
	err := db.write(ctx, func(t *wtx) error {
		var err error
		out, err = t.append(events, idempotencyKey, expected)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// append is Append inside an open write transaction.
func (t *wtx) append(events []demiurge.Event, key string, expected *demiurge.Expected) ([]demiurge.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	if t.rowsOnly {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "runtime store: an append needs the ledger's write lock")
	}
	for i := range events {
		if err := validateEvent(&events[i]); err != nil {
			return nil, err
		}
	}
	if key != "" {
		stored, err := t.eventsByKey(key)
		if err != nil || len(stored) > 0 {
			return stored, err
		}
	}
	if expected != nil {
		if expected.AggregateType == "" || expected.AggregateID == "" || expected.LastSeq < 0 {
			return nil, demiurge.Errorf(demiurge.EINVALID, "expected must include aggregate_type, aggregate_id, and last_seq")
		}
		var got int64
		if err := t.queryRow(sqlLastSeq, expected.AggregateType, expected.AggregateID).Scan(&got); err != nil {
			return nil, err
		}
		if got != expected.LastSeq {
			return nil, demiurge.Errorf(demiurge.ECONFLICT, "runtime aggregate changed: expected %d, got %d", expected.LastSeq, got)
		}
	}

	out := make([]demiurge.Event, len(events))
	var rows eventRows
	for i, e := range events {
		actor, body, err := t.prepareEvent(&e, key)
		if err != nil {
			return nil, err
		}
		if t.db.dialect.engine == Postgres {
			rows.add(e, actor, body)
		} else if e.Seq, err = t.insertEvent(e.EventID, e.AggregateType, e.AggregateID, e.Type,
			demiurge.FormatTime(e.CreatedAt), actor, body, nullable(key)); err != nil {
			return nil, err
		}
		out[i] = e
	}
	// On PostgreSQL the batch's rows go in with one statement (a round
	// trip per event is what a server costs); no projection reads
	// runtime_events, so projecting after the insert is the same.
	if t.db.dialect.engine == Postgres {
		if err := t.insertEventRows(&rows, key, out); err != nil {
			return nil, err
		}
	}
	bulk := false
	if t.db.dialect.engine == Postgres && len(out) > 1 {
		// Many tasks' events (the starts of claimed tasks) in two
		// statements rather than one per event.
		var err error
		if bulk, err = t.projectTasksBulk(out); err != nil {
			return nil, err
		}
	}
	for i := 0; !bulk && i < len(out); i++ {
		if err := t.project(&out[i]); err != nil {
			return nil, err
		}
	}
	if err := t.flushSessions(); err != nil {
		return nil, err
	}
	t.observe(out)
	return out, nil
}

// prepareEvent gives e what the insert needs: an id and a time when it has
// none, the batch's key; and returns its stored actor and payload.
func (t *wtx) prepareEvent(e *demiurge.Event, key string) (actor, body string, err error) {
	if e.EventID == "" {
		e.EventID = demiurge.NewID("evt")
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = t.now
	} else {
		e.CreatedAt = e.CreatedAt.UTC()
	}
	e.IdempotencyKey = key
	if actor, err = marshalJSON(e.Actor); err != nil {
		return "", "", demiurge.WrapError(demiurge.EINVALID, err, "event %s actor is not JSON-encodable", e.Type)
	}
	body, err = payloadJSON(e)
	return actor, body, err
}

// insertEvent inserts one event row on SQLite and returns its seq.
func (t *wtx) insertEvent(args ...any) (int64, error) {
	res, err := t.exec(sqlInsertEvent, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// payloadJSON is the stored form of e's payload: the encoded object, "{}"
// for none. It fails with EINVALID for a payload NewEvent could not encode
// or one that is not a JSON object.
func payloadJSON(e *demiurge.Event) (string, error) {
	if err := e.EncodeErr(); err != nil {
		return "", demiurge.WrapError(demiurge.EINVALID, err, "event %s payload is not JSON-encodable", e.Type)
	}
	body := bytes.TrimSpace(e.Payload)
	if len(body) == 0 {
		e.Payload = json.RawMessage("{}")
		return "{}", nil
	}
	// A projected payload is checked by decoding it into its struct; the
	// others are checked here.
	if _, projected := projectors[e.Type]; body[0] != '{' || !projected && !json.Valid(body) {
		return "", demiurge.Errorf(demiurge.EINVALID, "event %s payload is not a JSON object", e.Type)
	}
	return string(body), nil
}

func validateEvent(e *demiurge.Event) error {
	switch {
	case strings.TrimSpace(e.Type) == "":
		return demiurge.Errorf(demiurge.EINVALID, "event type is required")
	case strings.TrimSpace(e.AggregateType) == "":
		return demiurge.Errorf(demiurge.EINVALID, "event %s: aggregate_type is required", e.Type)
	case strings.TrimSpace(e.AggregateID) == "":
		return demiurge.Errorf(demiurge.EINVALID, "event %s: aggregate_id is required", e.Type)
	}
	return nil
}

func (t *wtx) eventsByKey(key string) ([]demiurge.Event, error) {
	rows, err := t.query(sqlEventsByKey, key)
	if err != nil {
		return nil, err
	}
	return scanEvents(rows)
}
