package store

import (
	"strings"

	"github.com/demiurge/demiurge"
)

// sqlInsertEventRowsKeyed is sqlInsertEventRows with an idempotency key per
// row ("" for none): the events of several batches in one statement.
const sqlInsertEventRowsKeyed = `INSERT INTO runtime_events
  (event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idempotency_key)
  SELECT e.event_id, e.aggregate_type, e.aggregate_id, e.type, e.created_at, e.actor_json, e.payload_json, NULLIF(e.idem, '')
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY
    AS e(event_id, aggregate_type, aggregate_id, type, created_at, actor_json, payload_json, idem, n)
  ORDER BY e.n
  RETURNING seq, event_id`

// groupResult is what appendGroup reports per batch.
type groupResult struct {
	stored []demiurge.Event
	task   demiurge.Task
}

// appendGroup appends independent batches set-wise on PostgreSQL: one read
// of their idempotency keys, one of their guarded aggregates' last seqs,
// one insert of every event, the projections, and one read of the tasks
// their first events name. It applies only when the outcome is the same
// as appending the batches one by one and none fails: no key is stored
// yet or repeated, every guard holds, no two batches touch one aggregate,
// and every batch names a task. Otherwise it writes nothing and ok is
// false, and the caller appends batch by batch.
func (t *wtx) appendGroup(batches []demiurge.EventBatch) (out []groupResult, ok bool, err error) {
	if t.db.dialect.engine != Postgres {
		return nil, false, nil
	}
	owner := map[string]int{} // aggregate → the batch that touches it
	keys := map[string]bool{}
	var keyArgs []string
	var aggTypes, aggIDs []string
	// touch records that batch i touches an aggregate; false when another
	// batch touches it too.
	touch := func(typ, id string, i int) bool {
		agg := typ + "\x00" + id
		prev, seen := owner[agg]
		if !seen {
			owner[agg] = i
			aggTypes, aggIDs = append(aggTypes, typ), append(aggIDs, id)
		}
		return !seen || prev == i
	}
	for i, b := range batches {
		if len(b.Events) == 0 {
			return nil, false, nil
		}
		if b.IdempotencyKey != "" {
			if keys[b.IdempotencyKey] {
				return nil, false, nil
			}
			keys[b.IdempotencyKey] = true
			keyArgs = append(keyArgs, b.IdempotencyKey)
		}
		for j := range b.Events {
			e := &b.Events[j]
			if validateEvent(e) != nil || !touch(e.AggregateType, e.AggregateID, i) {
				return nil, false, nil
			}
		}
		if x := b.Expected; x != nil {
			if x.AggregateType == "" || x.AggregateID == "" || x.LastSeq < 0 || !touch(x.AggregateType, x.AggregateID, i) {
				return nil, false, nil
			}
		}
	}
	if len(keyArgs) > 0 {
		found, err := t.strings(`SELECT idempotency_key FROM runtime_events WHERE idempotency_key = ANY(?::text[]) LIMIT 1`, keyArgs)
		if err != nil || len(found) > 0 {
			return nil, false, err
		}
	}
	last, err := t.lastSeqs(aggTypes, aggIDs)
	if err != nil {
		return nil, false, err
	}
	for _, b := range batches {
		if x := b.Expected; x != nil && last[x.AggregateType+"\x00"+x.AggregateID] != x.LastSeq {
			return nil, false, nil
		}
	}

	var rows eventRows
	var idems []string
	out = make([]groupResult, len(batches))
	for i, b := range batches {
		for _, e := range b.Events {
			actor, body, err := t.prepareEvent(&e, b.IdempotencyKey)
			if err != nil {
				return nil, false, nil // the batch by batch path reports it
			}
			rows.add(e, actor, body)
			idems = append(idems, b.IdempotencyKey)
			out[i].stored = append(out[i].stored, e)
		}
	}
	// From here on the group is written: a failure fails the transaction.
	seqs, err := t.insertKeyedRows(&rows, idems)
	if err != nil {
		return nil, false, err
	}
	var all []demiurge.Event
	for i := range out {
		for j := range out[i].stored {
			e := &out[i].stored[j]
			e.Seq = seqs[e.EventID]
			all = append(all, *e)
		}
	}
	bulk, err := t.projectTasksBulk(all)
	if err != nil {
		return nil, false, err
	}
	for i := 0; !bulk && i < len(all); i++ {
		if err := t.project(&all[i]); err != nil {
			return nil, false, err
		}
	}
	if err := t.flushSessions(); err != nil {
		return nil, false, err
	}
	firsts := make([]demiurge.Event, len(out))
	for i := range out {
		firsts[i] = out[i].stored[0]
		t.observe(out[i].stored)
	}
	tasks, err := t.tasksByID(firsts)
	if err != nil {
		return nil, false, err
	}
	for i := range out {
		tk, found := tasks[firsts[i].AggregateID]
		if !found {
			return nil, false, demiurge.Errorf(demiurge.ENOTFOUND, "task not found: %s", firsts[i].AggregateID)
		}
		out[i].task = tk
	}
	return out, true, nil
}

// insertKeyedRows inserts r with a key per row and returns the seq of each
// event id.
func (t *wtx) insertKeyedRows(r *eventRows, keys []string) (map[string]int64, error) {
	rows, err := t.query(sqlInsertEventRowsKeyed, r.ids, r.aggTypes, r.aggIDs, r.types, r.created, r.actors, r.bodies, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seqs := make(map[string]int64, len(r.ids))
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			return nil, err
		}
		seqs[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(seqs) != len(r.ids) {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "%d of %d events were inserted", len(seqs), len(r.ids))
	}
	return seqs, nil
}

// lastSeqs returns the last seq of each aggregate (types[i], ids[i]) by
// "type\x00id"; an aggregate with no event is absent (0). PostgreSQL only.
func (t *wtx) lastSeqs(types, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	rows, err := t.query(`SELECT aggregate_type, aggregate_id, MAX(seq) FROM runtime_events
  WHERE (aggregate_type, aggregate_id) IN (SELECT * FROM unnest(?::text[], ?::text[])) GROUP BY aggregate_type, aggregate_id`, types, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var typ, id string
		var seq int64
		if err := rows.Scan(&typ, &id, &seq); err != nil {
			return nil, err
		}
		out[typ+"\x00"+id] = seq
	}
	return out, rows.Err()
}

// anyID is a condition that col is one of ids, with its arguments: an
// array on PostgreSQL (one statement text whatever the count), an IN list
// on SQLite.
func (t *wtx) anyID(col string, ids []string) (string, []any) {
	if t.db.dialect.engine == Postgres {
		return col + " = ANY(?::text[])", []any{ids}
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return col + " IN (?" + strings.Repeat(", ?", len(ids)-1) + ")", args
}
