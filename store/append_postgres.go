package store

import (
	"github.com/demiurge/demiurge"
)

// sqlInsertEventRows inserts a batch of events on PostgreSQL in one
// statement: one array per column, rows in batch order (WITH ORDINALITY),
// so seq values follow the batch as they do one insert at a time.
const sqlInsertEventRows = `INSERT INTO runtime_events
  (event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idempotency_key)
  SELECT e.event_id, e.aggregate_type, e.aggregate_id, e.type, e.created_at, e.actor_json, e.payload_json, $8::text
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY
    AS e(event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, n)
  ORDER BY e.n
  RETURNING seq, event_id`

// eventRows are the columns of the events of one batch.
type eventRows struct {
	ids, aggTypes, aggIDs, types, created, actors, bodies []string
}

func (r *eventRows) add(e demiurge.Event, actor, body string) {
	r.ids = append(r.ids, e.EventID)
	r.aggTypes = append(r.aggTypes, e.AggregateType)
	r.aggIDs = append(r.aggIDs, e.AggregateID)
	r.types = append(r.types, e.Type)
	r.created = append(r.created, demiurge.FormatTime(e.CreatedAt))
	r.actors = append(r.actors, actor)
	r.bodies = append(r.bodies, body)
}

// insertEventRows inserts r and sets the Seq of each event of out (the
// same events, in the same order) from the rows PostgreSQL returns.
func (t *wtx) insertEventRows(r *eventRows, key string, out []demiurge.Event) error {
	rows, err := t.query(sqlInsertEventRows, r.ids, r.aggTypes, r.aggIDs, r.types, r.created, r.actors, r.bodies, nullable(key))
	if err != nil {
		return err
	}
	defer rows.Close()
	seqs := make(map[string]int64, len(out))
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			return err
		}
		seqs[id] = seq
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range out {
		seq, ok := seqs[out[i].EventID]
		if !ok {
			return demiurge.Errorf(demiurge.EINTERNAL, "event %s was not inserted", out[i].EventID)
		}
		out[i].Seq = seq
	}
	return nil
}
