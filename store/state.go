package store

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/demiurge/demiurge"
)

var (
	sqlStateRead    = `SELECT document_json FROM authored_state WHERE scope = ? AND owner_id = ?`
	sqlStateCurrent = `SELECT document_json, last_seq FROM authored_state WHERE scope = ? AND owner_id = ?`
	sqlStateUpsert  = `INSERT INTO authored_state (scope, owner_id, document_json, updated_at, last_seq)
  VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (scope, owner_id) DO UPDATE SET document_json = excluded.document_json,
  updated_at = excluded.updated_at, last_seq = excluded.last_seq`
)

func init() { on(projectStateUpdated) }

// projectStateUpdated applies one accepted write to the stored document,
// so writes of concurrent turns (core scope) compose instead of replacing
// each other. A write that no longer applies to the stored document (a
// concurrent write changed the shape of its path) or would pass the size
// limit is kept as an event and leaves the document as it is: the writer
// checked it against the document it saw, and refusing the batch would
// lose the turn's other events. An event seen again (same or older seq)
// is not applied twice.
func projectStateUpdated(t *wtx, e evMeta, p demiurge.StateModuleUpdatedPayload) error {
	if p.Scope != demiurge.StateScopeCore && p.Scope != demiurge.StateScopeSession || p.Owner == "" {
		return demiurge.Errorf(demiurge.EINVALID, "event %s %s: scope core|session and owner are required", e.typ, e.aggID)
	}
	var raw string
	var last int64
	doc := demiurge.NewStateDocument()
	switch err := t.queryRow(sqlStateCurrent, p.Scope, p.Owner).Scan(&raw, &last); {
	case isNoRows(err):
	case err != nil:
		return err
	default:
		if e.seq != 0 && e.seq <= last {
			return nil
		}
		if doc, err = decodeStateDocument(raw); err != nil {
			return err
		}
	}
	next, _, err := demiurge.ApplyStateOperation(doc, p.Target, p.Operation, p.Patch)
	if err != nil {
		return nil
	}
	text, err := marshalJSON(next)
	if err != nil {
		return err
	}
	_, err = t.exec(sqlStateUpsert, p.Scope, p.Owner, text, e.stamp(), e.seq)
	return err
}

func decodeStateDocument(raw string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "stored state document is not a JSON object")
	}
	return doc, nil
}

// StateDocument returns the state document of scope (core or session) and
// owner (the core or session id); one nothing wrote yet is
// {"schema_version": 1}. Numbers are json.Number.
func (db *DB) StateDocument(ctx context.Context, scope, owner string) (map[string]any, error) {
	var raw string
	err := db.reader.QueryRowContext(ctx, sqlStateRead, scope, owner).Scan(&raw)
	if isNoRows(err) {
		return demiurge.NewStateDocument(), nil
	}
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	return decodeStateDocument(raw)
}
