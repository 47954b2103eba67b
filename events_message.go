package demiurge

import "encoding/json"

// MessageBody is the content of a persisted message, stored as the
// message's content_json.
type MessageBody struct {
	Text string `json:"text"`
	Kind string `json:"kind,omitempty"` // default "message"
	// ModelVisible is whether the model sees the message (default true).
	ModelVisible    *bool  `json:"model_visible,omitempty"`
	Channel         string `json:"channel,omitempty"`
	Source          string `json:"source,omitempty"`
	ReplyTo         string `json:"reply_to,omitempty"`
	ConversationKey string `json:"conversation_key,omitempty"`
	// Metadata is an object, kept as given: a row of an earlier writer may
	// hold another value, which the delivery annotation replaces.
	Metadata any `json:"metadata,omitempty"`
}

// MessagePersistedPayload persists one transcript message (aggregate
// message "<message id>").
type MessagePersistedPayload struct {
	MessageID string `json:"message_id,omitempty"`
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`
	Role      string `json:"role,omitempty"` // default user
	// Visible is whether the transcript shows the message (default true).
	Visible *bool        `json:"visible,omitempty"`
	Content *MessageBody `json:"content,omitempty"`
}

// MessageUpdatedPayload replaces a message's content and, when given, its
// visibility.
type MessageUpdatedPayload struct {
	Visible *bool        `json:"visible,omitempty"`
	Content *MessageBody `json:"content,omitempty"`
}

func (MessagePersistedPayload) Type() string { return EvMessagePersisted }
func (MessageUpdatedPayload) Type() string   { return EvMessageUpdated }

// legacyMessageKeys are the spellings earlier writers used: "visibility"
// ("visible" | "hidden") for Visible, and a top-level "text" for a message
// whose content has no text.
type legacyMessageKeys struct {
	Visibility string  `json:"visibility"`
	Text       *string `json:"text"`
}

func (k legacyMessageKeys) visible(v *bool) *bool {
	if v != nil || k.Visibility == "" {
		return v
	}
	shown := k.Visibility != "hidden"
	return &shown
}

// UnmarshalJSON reads the payload and the legacy spellings.
func (p *MessagePersistedPayload) UnmarshalJSON(b []byte) error {
	type plain MessagePersistedPayload
	var v struct {
		plain
		legacyMessageKeys
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = MessagePersistedPayload(v.plain)
	p.Visible = v.visible(p.Visible)
	if v.Text != nil && (p.Content == nil || p.Content.Text == "") {
		p.Content = &MessageBody{Text: *v.Text}
	}
	return nil
}

// UnmarshalJSON reads the payload and the legacy visibility spelling.
func (p *MessageUpdatedPayload) UnmarshalJSON(b []byte) error {
	type plain MessageUpdatedPayload
	var v struct {
		plain
		legacyMessageKeys
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = MessageUpdatedPayload(v.plain)
	p.Visible = v.visible(p.Visible)
	return nil
}
