package store

import (
	"context"
	"strings"

	"github.com/demiurge/demiurge"
)

const deliverySelect = `SELECT delivery_id, owner_turn_id, channel, target_json, status, idempotency_key, payload_json,
  attempts, last_error, created_at, sent_at FROM outbox`

// Delivery returns one outbox row; ENOTFOUND "delivery not found: <id>".
func (db *DB) Delivery(ctx context.Context, id string) (demiurge.Delivery, error) {
	d, err := scanDelivery(db.reader.QueryRowContext(ctx, deliverySelect+` WHERE delivery_id = ?`, id))
	if isNoRows(err) {
		return d, demiurge.Errorf(demiurge.ENOTFOUND, "delivery not found: %s", id)
	}
	return d, db.codeError(ctx, err)
}

// Deliveries returns outbox rows newest first: in reverse order of queueing
// (rowid DESC; an outbox row is written once, by delivery.queued).
func (db *DB) Deliveries(ctx context.Context, f demiurge.DeliveryFilter) ([]demiurge.Delivery, error) {
	q, args := deliveriesQuery(f)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, db.codeError(ctx, err)
		}
		out = append(out, d)
	}
	return out, db.codeError(ctx, rows.Err())
}

func deliveriesQuery(f demiurge.DeliveryFilter) (string, []any) {
	var where []string
	var args []any
	if f.TurnID != "" {
		where = append(where, "owner_turn_id = ?")
		args = append(args, f.TurnID)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	q := deliverySelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY rowid DESC LIMIT ?"
	return q, append(args, clampLimit(f.Limit, demiurge.DefaultDeliveryLimit, demiurge.MaxDeliveryLimit))
}

func scanDelivery(r scanner) (demiurge.Delivery, error) {
	var d demiurge.Delivery
	var turn, channel, key, lastErr, sent ns
	var target, body, created string
	if err := r.Scan(&d.ID, &turn, &channel, &target, &d.Status, &key, &body, &d.Attempts, &lastErr, &created, &sent); err != nil {
		return d, err
	}
	d.OwnerTurnID, d.Channel, d.IdempotencyKey, d.LastError = turn.String, channel.String, key.String, lastErr.String
	d.Target, d.Payload = objectOrCorrupt(target), objectOrCorrupt(body)
	d.CreatedAt, d.SentAt = demiurge.ParseTime(created), parseTime(sent)
	return d, nil
}
