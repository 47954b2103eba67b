package session

import (
	"cmp"
	"context"

	"github.com/demiurge/demiurge"
)

// AppendMessage persists one message (event message.persisted, message id
// "msg_…") and returns it with its transcript sequence. Errors: EINVALID for
// a missing session id or an unknown role, ENOTFOUND "session not found: <id>"
// for a missing session.
func (r *Runtime) AppendMessage(ctx context.Context, in demiurge.MessageInput) (demiurge.Message, error) {
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
func (r *Runtime) Message(in demiurge.MessageInput) (demiurge.EventBatch, demiurge.Message, error) {
	if in.SessionID == "" {
		return demiurge.EventBatch{}, demiurge.Message{}, demiurge.Errorf(demiurge.EINVALID, "message requires a session_id")
	}
	switch in.Role {
	case demiurge.RoleUser, demiurge.RoleAssistant, demiurge.RoleSystem, demiurge.RoleTool:
	default:
		return demiurge.EventBatch{}, demiurge.Message{}, demiurge.Errorf(demiurge.EINVALID, "invalid message role %q: expected user, assistant, system or tool", in.Role)
	}
	in.Kind = cmp.Or(in.Kind, "message")
	id := demiurge.NewID("msg")
	content := demiurge.MessageContent{
		Text:         in.Text,
		Kind:         in.Kind,
		ModelVisible: in.ModelVisible,
		Channel:      in.Channel,
		Source:       in.Source,
		Metadata:     in.Metadata,
	}
	ev := r.event(demiurge.AggMessage, id, messagePayload(id, in.SessionID, in.TurnID, in.Role, in.Visible, content))
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

// messagePayload is the message.persisted payload of one message.
func messagePayload(id, sessionID, turnID, role string, visible bool, c demiurge.MessageContent) demiurge.MessagePersistedPayload {
	body := &demiurge.MessageBody{Text: c.Text, Kind: c.Kind, ModelVisible: &c.ModelVisible, Channel: c.Channel, Source: c.Source}
	if len(c.Metadata) > 0 {
		body.Metadata = c.Metadata
	}
	return demiurge.MessagePersistedPayload{MessageID: id, SessionID: sessionID, TurnID: turnID, Role: role,
		Visible: &visible, Content: body}
}

// SetBootstrap records the bootstrap snapshot of a session and marks its
// bootstrap phase as run (session.updated). ENOTFOUND for a missing session.
func (r *Runtime) SetBootstrap(ctx context.Context, sessionID, snapshot string) error {
	if _, err := r.session(ctx, sessionID); err != nil {
		return err
	}
	ev := r.event(demiurge.AggSession, sessionID, demiurge.SessionUpdatedPayload{
		SessionTarget: demiurge.SessionTarget{BootstrapContext: snapshot, BootstrapInitialized: true},
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
	p := demiurge.SessionUpdatedPayload{Title: u.Title, Touch: &u.Touch, SessionTarget: demiurge.SessionTarget{
		CoreRevision: u.CoreRevision, Workspace: u.Workspace, Provider: u.Provider, Model: u.Model,
	}}
	if len(u.Metadata) > 0 {
		p.Metadata = u.Metadata
	}
	_, err := r.st.Append(ctx, []demiurge.Event{r.event(demiurge.AggSession, id, p)}, "", nil)
	return err
}
