package session

import (
	"context"

	"github.com/demiurge/demiurge"
)

// MessageInput is one transcript message to persist.
type MessageInput struct {
	SessionID    string
	TurnID       string
	Role         string // user, assistant, system or tool
	Text         string
	Kind         string // "message" when empty
	Visible      bool
	ModelVisible bool
	Metadata     map[string]any
	Channel      string
	Source       string
	// IdempotencyKey, when set, makes a repeated append a no-op that
	// returns the first message (a redelivered notice is written once).
	IdempotencyKey string
}

// AppendMessage persists one message (event message.persisted, message id
// "msg_…") and returns it with its transcript sequence. Errors: EINVALID for
// a missing session id or an unknown role, ENOTFOUND "session not found: <id>"
// for a missing session.
func (r *Runtime) AppendMessage(ctx context.Context, in MessageInput) (demiurge.Message, error) {
	b, msg, err := r.Message(in)
	if err != nil {
		return demiurge.Message{}, err
	}
	if _, err := r.session(ctx, in.SessionID); err != nil {
		return demiurge.Message{}, err
	}
	stored, err := r.st.Append(ctx, b.Events, b.IdempotencyKey, nil)
	if err != nil {
		return demiurge.Message{}, err
	}
	if len(stored) > 0 {
		// A repeated idempotency key returns the first message.
		msg.ID, msg.Seq, msg.CreatedAt = stored[0].AggregateID, stored[0].Seq, stored[0].CreatedAt
	}
	return msg, nil
}

// Message is the batch AppendMessage appends and the message it records
// (without its sequence), for a caller that writes the batch with others in
// one transaction and vouches for the session (a turn, which holds it).
// EINVALID for a missing session id or an unknown role.
func (r *Runtime) Message(in MessageInput) (demiurge.EventBatch, demiurge.Message, error) {
	if in.SessionID == "" {
		return demiurge.EventBatch{}, demiurge.Message{}, demiurge.Errorf(demiurge.EINVALID, "message requires a session_id")
	}
	switch in.Role {
	case demiurge.RoleUser, demiurge.RoleAssistant, demiurge.RoleSystem, demiurge.RoleTool:
	default:
		return demiurge.EventBatch{}, demiurge.Message{}, demiurge.Errorf(demiurge.EINVALID, "invalid message role %q: expected user, assistant, system or tool", in.Role)
	}
	if in.Kind == "" {
		in.Kind = "message"
	}
	id := demiurge.NewID("msg")
	content := demiurge.MessageContent{
		Text:         in.Text,
		Kind:         in.Kind,
		ModelVisible: in.ModelVisible,
		Channel:      in.Channel,
		Source:       in.Source,
		Metadata:     in.Metadata,
	}
	ev := r.event(demiurge.AggMessage, id, demiurge.EvMessagePersisted, messagePayload(id, in.SessionID, in.TurnID, in.Role, in.Visible, content))
	msg := demiurge.Message{
		ID:        id,
		SessionID: in.SessionID,
		TurnID:    in.TurnID,
		Role:      in.Role,
		Visible:   in.Visible,
		Content:   content,
		CreatedAt: ev.CreatedAt,
	}
	return demiurge.EventBatch{Events: []demiurge.Event{ev}, IdempotencyKey: in.IdempotencyKey}, msg, nil
}

// MessagePayload is the payload of a message.persisted event (the keys the
// store projects). The delivery runtime uses it for the history message of an
// outbox batch.
func messagePayload(id, sessionID, turnID, role string, visible bool, c demiurge.MessageContent) map[string]any {
	content := map[string]any{
		"text":          c.Text,
		"kind":          c.Kind,
		"model_visible": c.ModelVisible,
	}
	if c.Channel != "" {
		content["channel"] = c.Channel
	}
	if c.Source != "" {
		content["source"] = c.Source
	}
	if len(c.Metadata) > 0 {
		content["metadata"] = c.Metadata
	}
	p := map[string]any{
		"message_id": id,
		"session_id": sessionID,
		"role":       role,
		"visible":    visible,
		"content":    content,
	}
	if turnID != "" {
		p["turn_id"] = turnID
	}
	return p
}

// SetBootstrap records the bootstrap snapshot of a session and marks its
// bootstrap phase as run (session.updated). ENOTFOUND for a missing session.
func (r *Runtime) SetBootstrap(ctx context.Context, sessionID, snapshot string) error {
	if _, err := r.session(ctx, sessionID); err != nil {
		return err
	}
	ev := r.event(demiurge.AggSession, sessionID, demiurge.EvSessionUpdated, map[string]any{
		"bootstrap_context":             snapshot,
		"bootstrap_context_initialized": true,
	})
	_, err := r.st.Append(ctx, []demiurge.Event{ev}, "", nil)
	return err
}

// Update is a change to a session's facts; empty fields are unchanged.
type Update struct {
	CoreRevision string
	Workspace    string
	Provider     string
	Model        string
	Title        string
	Metadata     map[string]any // merged into the session metadata
	// Touch moves updated_at (and so the session's place in List).
	Touch bool
}

// Update records u on session id (session.updated). ENOTFOUND for a missing
// session.
func (r *Runtime) Update(ctx context.Context, id string, u Update) error {
	if _, err := r.session(ctx, id); err != nil {
		return err
	}
	p := map[string]any{"touch": u.Touch}
	put := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	put("core_revision", u.CoreRevision)
	put("workspace", u.Workspace)
	put("provider", u.Provider)
	put("model", u.Model)
	put("title", u.Title)
	if len(u.Metadata) > 0 {
		p["metadata"] = u.Metadata
	}
	_, err := r.st.Append(ctx, []demiurge.Event{r.event(demiurge.AggSession, id, demiurge.EvSessionUpdated, p)}, "", nil)
	return err
}
