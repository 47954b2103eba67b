package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/demiurge/demiurge"
)

const eventColumns = `seq, event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idempotency_key`

// Events returns the events matching f with seq > f.AfterSeq, in seq order,
// at most f.Limit of them (the cursor applies before the limit, so paging
// with AfterSeq = last returned seq visits every event once).
func (db *DB) Events(ctx context.Context, f demiurge.EventFilter) ([]demiurge.Event, error) {
	q, args := eventsQuery(f)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	evs, err := scanEvents(rows)
	return evs, db.codeError(ctx, err)
}

func eventsQuery(f demiurge.EventFilter) (string, []any) {
	where := []string{"seq > ?"}
	args := []any{f.AfterSeq}
	if f.AggregateType != "" {
		where = append(where, "aggregate_type = ?")
		args = append(args, f.AggregateType)
	}
	if f.AggregateID != "" {
		where = append(where, "aggregate_id = ?")
		args = append(args, f.AggregateID)
	}
	if f.Type != "" {
		where = append(where, "type = ?")
		args = append(args, f.Type)
	}
	args = append(args, clampLimit(f.Limit, demiurge.DefaultEventLimit, demiurge.MaxEventLimit))
	// One aggregate's events are few; the type index would walk every
	// event of that type in the database instead.
	index := ""
	if f.AggregateType != "" && f.AggregateID != "" {
		index = ` INDEXED BY idx_runtime_events_aggregate`
	}
	return `SELECT ` + eventColumns + ` FROM runtime_events` + index + ` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY seq LIMIT ?`, args
}

// LastSeq returns the seq of the newest event of one aggregate, 0 if none.
func (db *DB) LastSeq(ctx context.Context, aggType, aggID string) (int64, error) {
	var n int64
	err := db.reader.QueryRowContext(ctx, sqlLastSeq, aggType, aggID).Scan(&n)
	return n, db.codeError(ctx, err)
}

// scanEvents reads rows of eventColumns and closes rows.
func scanEvents(rows *sql.Rows) ([]demiurge.Event, error) {
	defer rows.Close()
	var out []demiurge.Event
	for rows.Next() {
		var e demiurge.Event
		var created, actor, body string
		var key ns
		if err := rows.Scan(&e.Seq, &e.EventID, &e.AggregateType, &e.AggregateID, &e.Type, &created, &actor, &body, &key); err != nil {
			return nil, err
		}
		e.CreatedAt = demiurge.ParseTime(created)
		e.Actor = objectOrCorrupt(actor)
		e.Payload = json.RawMessage(body)
		e.IdempotencyKey = key.String
		out = append(out, e)
	}
	return out, rows.Err()
}

// clampLimit applies a query's default and maximum row count.
func clampLimit(n, def, max int) int {
	switch {
	case n <= 0:
		return def
	case n > max:
		return max
	}
	return n
}
