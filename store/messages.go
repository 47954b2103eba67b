package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
)

// RecentMessages returns the newest f.Limit messages of a session that match
// f (and lie before f.BeforeSeq and after f.AfterSeq when given), in
// transcript order (runtime_seq ascending). The cost is bounded by the window, not the transcript: the
// query walks idx_messages_session backwards from the cursor. To page
// further back, pass the Seq of the first message returned as BeforeSeq.
func (db *DB) RecentMessages(ctx context.Context, sessionID string, f demiurge.MessageFilter) ([]demiurge.Message, error) {
	q, args := recentMessagesQuery(sessionID, f)
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.codeError(ctx, err)
	}
	defer rows.Close()
	var out []demiurge.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, db.codeError(ctx, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, db.codeError(ctx, err)
	}
	slices.Reverse(out)
	return out, nil
}

func recentMessagesQuery(sessionID string, f demiurge.MessageFilter) (string, []any) {
	where := []string{"session_id = ?"}
	args := []any{sessionID}
	if f.BeforeSeq > 0 {
		where = append(where, "runtime_seq < ?")
		args = append(args, f.BeforeSeq)
	}
	if f.AfterSeq > 0 {
		where = append(where, "runtime_seq > ?")
		args = append(args, f.AfterSeq)
	}
	if f.ModelVisibleOnly {
		where = append(where, "model_visible = 1")
	}
	if f.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, f.Kind)
	}
	if len(f.Roles) > 0 {
		where = append(where, "role IN ("+placeholders(len(f.Roles))+")")
		for _, r := range f.Roles {
			args = append(args, r)
		}
	}
	args = append(args, clampLimit(f.Limit, demiurge.DefaultMessageLimit, demiurge.MaxMessageLimit))
	return `SELECT message_id, session_id, turn_id, role, visibility, kind, model_visible, content_json, created_at, runtime_seq
  FROM messages WHERE ` + strings.Join(where, " AND ") + ` ORDER BY runtime_seq DESC LIMIT ?`, args
}

func scanMessage(r scanner) (demiurge.Message, error) {
	var m demiurge.Message
	var turn ns
	var visibility, kind, content, created string
	var modelVisible bool
	if err := r.Scan(&m.ID, &m.SessionID, &turn, &m.Role, &visibility, &kind, &modelVisible, &content, &created, &m.Seq); err != nil {
		return m, err
	}
	m.TurnID = turn.String
	m.Visible = visibility != "hidden"
	m.CreatedAt = demiurge.ParseTime(created)
	if err := json.Unmarshal([]byte(content), &m.Content); err != nil {
		m.Content = demiurge.MessageContent{Metadata: map[string]any{"_corrupt_json": content}}
	}
	// The columns are authoritative for the fields queries filter on.
	m.Content.Kind = kind
	m.Content.ModelVisible = modelVisible
	return m, nil
}
