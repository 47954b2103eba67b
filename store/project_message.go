package store

import (
	"strings"

	"github.com/demiurge/demiurge"
)

// Derived session fields (spec host-runtime §3.1).
const (
	previewRunes = 120
	titleRunes   = 80
)

var (
	sqlMessageInsert = prep(`INSERT INTO messages
  (message_id, session_id, turn_id, role, visibility, kind, model_visible, content_json, created_at, runtime_seq)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(message_id) DO NOTHING`)
	sqlMessageReplace = prep(`UPDATE messages SET session_id = ?, turn_id = ?, role = ?, visibility = ?, kind = ?,
  model_visible = ?, content_json = ?, created_at = ?, runtime_seq = ? WHERE message_id = ?`)
	// sqlSessionAfterMessage maintains the derived fields in O(1): the new
	// message is always the newest, so it is the preview when it qualifies,
	// and it is the title when no title was set yet.
	sqlSessionAfterMessage = prep(`UPDATE sessions SET message_count = message_count + ?,
  preview = COALESCE(?, preview),
  title = CASE WHEN COALESCE(title, '') = '' AND ? IS NOT NULL THEN ? ELSE title END,
  updated_at = ? WHERE session_id = ?`)
	sqlMessageUpdate = prep(`UPDATE messages SET content_json = COALESCE(?, content_json), kind = COALESCE(?, kind),
  model_visible = COALESCE(?, model_visible), visibility = COALESCE(?, visibility) WHERE message_id = ?`)
)

func init() {
	register(projectMessagePersisted, demiurge.EvMessagePersisted)
	register(projectMessageUpdated, demiurge.EvMessageUpdated)
}

// messageVisibility reads "visibility" ("visible"/"hidden") or the boolean
// "visible"; default visible. ok is false when neither is given.
func messageVisibility(p payload) (v string, ok bool) {
	if s := p.str("visibility"); s != "" {
		if s == "hidden" {
			return "hidden", true
		}
		return "visible", true
	}
	if p.has("visible") {
		if p.boolean("visible", true) {
			return "visible", true
		}
		return "hidden", true
	}
	return "visible", false
}

func projectMessagePersisted(t *wtx, e *demiurge.Event, p payload) error {
	content := payload(p.obj("content"))
	if content == nil {
		content = payload{}
	}
	if !content.has("text") && p.has("text") {
		content = payload{"text": p.str("text")}
	}
	kind := content.strOr("kind", "message")
	modelVisible := content.boolean("model_visible", true)
	visibility, _ := messageVisibility(p)
	contentJSON, err := marshalJSON(map[string]any(content))
	if err != nil {
		return err
	}
	sessionID, role, at := p.str("session_id"), p.strOr("role", demiurge.RoleUser), eventTime(e)
	res, err := t.exec(sqlMessageInsert, e.AggregateID, sessionID, p.nstr("turn_id"), role, visibility,
		kind, modelVisible, contentJSON, at, e.Seq)
	if err != nil {
		return err
	}
	added := int64(1)
	if n, _ := res.RowsAffected(); n == 0 {
		// Re-persisting a message replaces it (and moves it to this seq)
		// without counting it twice.
		added = 0
		if _, err := t.exec(sqlMessageReplace, sessionID, p.nstr("turn_id"), role, visibility, kind,
			modelVisible, contentJSON, at, e.Seq, e.AggregateID); err != nil {
			return err
		}
	}
	var preview, title string
	if visibility == "visible" && kind == "message" {
		if preview = previewText(content.str("text")); preview != "" && role == demiurge.RoleUser {
			title = truncateRunes(preview, titleRunes)
		}
	}
	t.noteMessage(sessionID, added, preview, title, at)
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
func projectMessageUpdated(t *wtx, e *demiurge.Event, p payload) error {
	var contentJSON, kind, modelVisible any
	if c := p.obj("content"); c != nil {
		s, err := marshalJSON(c)
		if err != nil {
			return err
		}
		contentJSON = s
		cp := payload(c)
		kind = cp.strOr("kind", "message")
		modelVisible = cp.boolean("model_visible", true)
	}
	var visibility any
	if v, ok := messageVisibility(p); ok {
		visibility = v
	}
	if _, err := t.exec(sqlMessageUpdate, contentJSON, kind, modelVisible, visibility, e.AggregateID); err != nil {
		return err
	}
	_, err := t.exec(sqlSessionMessageEdited, e.AggregateID)
	return err
}

// sqlSessionMessageEdited counts an edit on the message's session.
var sqlSessionMessageEdited = prep(`UPDATE sessions SET message_edits = message_edits + 1
  WHERE session_id = (SELECT session_id FROM messages WHERE message_id = ?)`)
