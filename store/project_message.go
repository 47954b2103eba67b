package store

import (
	"cmp"
	"strings"

	"github.com/demiurge/demiurge"
)

// Derived session fields.
const (
	previewRunes = 120
	titleRunes   = 80
)

var (
	sqlMessageInsert = `INSERT INTO messages
  (message_id, session_id, turn_id, role, visibility, kind, model_visible, content_json, created_at, runtime_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(message_id) DO NOTHING`
	sqlMessageReplace = `UPDATE messages SET session_id = ?, turn_id = ?, role = ?, visibility = ?, kind = ?,
  model_visible = ?, content_json = ?, created_at = ?, runtime_seq = ? WHERE message_id = ?`
	// sqlSessionAfterMessage maintains the derived fields in O(1): the new
	// message is always the newest, so it is the preview when it qualifies,
	// and it is the title when no title was set yet.
	sqlSessionAfterMessage = `UPDATE sessions SET message_count = message_count + ?,
  preview = COALESCE(?, preview),
  title = CASE WHEN COALESCE(title, '') = '' AND CAST(? AS TEXT) IS NOT NULL THEN ? ELSE title END,
  updated_at = ? WHERE session_id = ?`
	sqlMessageUpdate = `UPDATE messages SET content_json = COALESCE(?, content_json), kind = COALESCE(?, kind),
  model_visible = COALESCE(?, model_visible), visibility = COALESCE(?, visibility) WHERE message_id = ?`
)

func init() {
	on(projectMessagePersisted)
	on(projectMessageUpdated)
}

// visibility is the visibility column of a message: visible unless the
// payload says otherwise.
func visibility(visible *bool) string {
	if visible != nil && !*visible {
		return "hidden"
	}
	return "visible"
}

// contentColumns returns what the messages row keeps of a message body:
// content_json, kind (default message) and model_visible (default true).
func contentColumns(c *demiurge.MessageBody) (contentJSON, kind string, modelVisible int, err error) {
	contentJSON, err = marshalJSON(c)
	// model_visible is an INTEGER 0/1 column on both engines.
	return contentJSON, cmp.Or(c.Kind, "message"), boolInt(c.ModelVisible == nil || *c.ModelVisible), err
}

func projectMessagePersisted(t *wtx, e evMeta, p demiurge.MessagePersistedPayload) error {
	content := p.Content
	if content == nil {
		content = &demiurge.MessageBody{}
	}
	contentJSON, kind, modelVisible, err := contentColumns(content)
	if err != nil {
		return err
	}
	vis := visibility(p.Visible)
	role, at := cmp.Or(p.Role, demiurge.RoleUser), e.stamp()
	res, err := t.exec(sqlMessageInsert, e.aggID, p.SessionID, nullable(p.TurnID), role, vis,
		kind, modelVisible, contentJSON, at, e.seq)
	if err != nil {
		return err
	}
	added := int64(1)
	if n, _ := res.RowsAffected(); n == 0 {
		// Re-persisting a message replaces it (and moves it to this seq)
		// without counting it twice.
		added = 0
		if _, err := t.exec(sqlMessageReplace, p.SessionID, nullable(p.TurnID), role, vis, kind,
			modelVisible, contentJSON, at, e.seq, e.aggID); err != nil {
			return err
		}
	}
	var preview, title string
	if vis == "visible" && kind == "message" {
		if preview = previewText(content.Text); preview != "" && role == demiurge.RoleUser {
			title = truncateRunes(preview, titleRunes)
		}
	}
	t.noteMessage(p.SessionID, added, preview, title, at)
	return nil
}

// sessionDelta accumulates the derived-field changes the messages of one
// append batch make to one session, so a batch costs one session UPDATE,
// not one per message.
type sessionDelta struct {
	added     int64
	preview   string // of the newest qualifying message
	title     string // of the oldest qualifying user message
	updatedAt string
}

func (t *wtx) noteMessage(sessionID string, added int64, preview, title, at string) {
	if t.sessionDeltas == nil {
		t.sessionDeltas = map[string]*sessionDelta{}
	}
	d := t.sessionDeltas[sessionID]
	if d == nil {
		d = &sessionDelta{}
		t.sessionDeltas[sessionID] = d
		t.sessionOrder = append(t.sessionOrder, sessionID)
	}
	d.added += added
	if preview != "" {
		d.preview = preview
	}
	if d.title == "" {
		d.title = title
	}
	d.updatedAt = at
}

// flushSessions applies the accumulated derived-field changes. It runs at
// the end of every append batch and before any session.* projection, so
// every projection sees the state sequential application would give.
func (t *wtx) flushSessions() error {
	for _, id := range t.sessionOrder {
		d := t.sessionDeltas[id]
		if _, err := t.exec(sqlSessionAfterMessage, d.added, nullable(d.preview), nullable(d.title), nullable(d.title),
			d.updatedAt, id); err != nil {
			return err
		}
		delete(t.sessionDeltas, id)
	}
	t.sessionOrder = t.sessionOrder[:0]
	return nil
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// previewText is text stripped, with line breaks as spaces, cut to 120 runes.
func previewText(text string) string {
	s := strings.TrimSpace(text)
	if s == "" {
		return ""
	}
	s = lineBreaks.Replace(s)
	return truncateRunes(s, previewRunes)
}

// projectMessageUpdated replaces a message's content (and visibility when
// given) and counts the edit on the session (message_edits). Other derived
// session fields are left as they are: an edit does not change which
// message is newest.
func projectMessageUpdated(t *wtx, e evMeta, p demiurge.MessageUpdatedPayload) error {
	var contentJSON, kind, modelVisible, vis any
	if p.Content != nil {
		c, k, mv, err := contentColumns(p.Content)
		if err != nil {
			return err
		}
		contentJSON, kind, modelVisible = c, k, mv
	}
	if p.Visible != nil {
		vis = visibility(p.Visible)
	}
	if _, err := t.exec(sqlMessageUpdate, contentJSON, kind, modelVisible, vis, e.aggID); err != nil {
		return err
	}
	_, err := t.exec(sqlSessionMessageEdited, e.aggID)
	return err
}

// sqlSessionMessageEdited counts an edit on the message's session.
var sqlSessionMessageEdited = `UPDATE sessions SET message_edits = message_edits + 1
  WHERE session_id = (SELECT session_id FROM messages WHERE message_id = ?)`
