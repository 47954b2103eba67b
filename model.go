package demiurge

import "context"

// ToolCall is one tool call requested by a model.
type ToolCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// ModelMessage is one message of a provider request, in the provider-neutral
// shape.
type ModelMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// ToolSpec is one tool definition offered to a model.
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// ModelRequest is one call to a provider.
type ModelRequest struct {
	Model    string
	Messages []ModelMessage
	Tools    []ToolSpec
	Metadata map[string]any
	// MaxTokens is the output limit of the call (the protocol's max_tokens);
	// 0 leaves it to the provider's own default.
	MaxTokens int
	// CacheKey groups requests that share a prompt prefix for the
	// provider's prompt cache (a session id; "" for none).
	CacheKey string
	// StableMessages is how many leading Messages form the prefix that
	// stays byte-identical from call to call (system, summary, older
	// history), so a provider may mark its end for the prompt cache; 0 is
	// no such prefix.
	StableMessages int
}

// ModelLimits are what one model can take: its context window and its
// output limit, in tokens, and the tokenizer that counts them ("" for a
// calibrated estimate).
type ModelLimits struct {
	ContextWindow   int    `json:"context_window"`
	MaxOutputTokens int    `json:"max_output_tokens"`
	Tokenizer       string `json:"tokenizer,omitempty"`
}

// ModelResponse is a provider's answer: final text or tool calls.
type ModelResponse struct {
	Content   string
	ToolCalls []ToolCall
	Raw       map[string]any
	// Usage is what the call cost as the provider reported it (zero: not
	// reported).
	Usage Usage
}

// Provider is a model endpoint. Complete sends one request and returns the
// whole response; when stream is not nil, text deltas are passed to it as they
// arrive (it is called from the calling goroutine only). A Provider is safe for
// concurrent use. Errors carry EUNAVAILABLE (connection, 5xx after retries),
// ETIMEOUT, ECANCELED, EUNAUTHORIZED (401/403) or EINVALID (4xx, malformed
// response); their messages never contain the API key.
type Provider interface {
	Complete(ctx context.Context, req ModelRequest, stream func(delta string)) (ModelResponse, error)
}
