package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/demiurge/demiurge"
)

// OpenAI is a client of the OpenAI Chat Completions API (POST
// <base>/chat/completions) and of the many servers compatible with it. It is
// safe for concurrent use.
type OpenAI struct {
	c           *client
	extraBody   func(model string) map[string]any
	maxTokens   int
	outputField string // the output-limit field ("": max_tokens)
}

var _ demiurge.Provider = (*OpenAI)(nil)

// NewOpenAI returns a Chat Completions client for e. The request path
// /chat/completions is appended to e.BaseURL unless it already ends with it.
// It fails with ECONFIG when the base URL is not an absolute http(s) URL or
// the key is empty.
func NewOpenAI(e Endpoint) (*OpenAI, error) {
	c, err := e.newClient("openai", func(base string) string {
		if strings.HasSuffix(base, "/chat/completions") {
			return base
		}
		return base + "/chat/completions"
	}, func(h http.Header, key string) {
		h.Set("Authorization", "Bearer "+key)
	})
	if err != nil {
		return nil, err
	}
	return &OpenAI{c: c, extraBody: e.ExtraBody, maxTokens: e.Options.MaxTokens, outputField: e.OutputLimitField}, nil
}

// Complete sends req. With stream == nil it asks for one JSON response;
// otherwise it asks for a server-sent event stream and passes each text delta
// to stream, on the calling goroutine, as it arrives. Errors: see the
// package documentation.
func (p *OpenAI) Complete(ctx context.Context, req demiurge.ModelRequest, stream func(delta string)) (demiurge.ModelResponse, error) {
	body, err := p.requestBody(req, stream != nil)
	if err != nil {
		return demiurge.ModelResponse{}, err
	}
	return p.c.complete(ctx, body, stream, decodeOpenAIResponse, func() streamDecoder { return newOpenAIStream(p.c.name) })
}

// Wire shapes of a Chat Completions request.
type (
	oaMessage struct {
		Role       string       `json:"role"`
		Content    *string      `json:"content"`
		Name       string       `json:"name,omitempty"`
		ToolCallID string       `json:"tool_call_id,omitempty"`
		ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	}
	oaToolCall struct {
		ID       string     `json:"id"`
		Type     string     `json:"type"`
		Function oaFunction `json:"function"`
	}
	oaFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	oaTool struct {
		Type     string       `json:"type"`
		Function oaToolSchema `json:"function"`
	}
	oaToolSchema struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
)

// requestBody maps req onto the Chat Completions payload: an assistant
// message with tool calls has content null when empty and
// tool_calls with JSON-string arguments; a tool message carries tool_call_id
// and name.
func (p *OpenAI) requestBody(req demiurge.ModelRequest, stream bool) ([]byte, error) {
	name := p.c.name
	if strings.TrimSpace(req.Model) == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "%s: request has no model", name)
	}
	msgs := make([]oaMessage, 0, len(req.Messages))
	for i, m := range req.Messages {
		content := m.Content
		om := oaMessage{Role: m.Role, Content: &content}
		switch m.Role {
		case "tool":
			om.ToolCallID, om.Name = m.ToolCallID, m.Name
		case "assistant":
			if len(m.ToolCalls) == 0 {
				break
			}
			if m.Content == "" {
				om.Content = nil
			}
			for _, tc := range m.ToolCalls {
				args, err := json.Marshal(arguments(tc.Arguments))
				if err != nil {
					return nil, demiurge.WrapError(demiurge.EINVALID, err, "%s: messages[%d]: arguments of tool call %q are not JSON", name, i, tc.Name)
				}
				om.ToolCalls = append(om.ToolCalls, oaToolCall{ID: tc.ID, Type: "function", Function: oaFunction{Name: tc.Name, Arguments: string(args)}})
			}
		}
		msgs = append(msgs, om)
	}
	payload := map[string]any{"model": req.Model, "messages": msgs}
	if len(req.Tools) > 0 {
		tools := make([]oaTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			tools = append(tools, oaTool{Type: "function", Function: oaToolSchema{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.InputSchema)}})
		}
		payload["tools"] = tools
	}
	if stream {
		// A stream reports usage only when asked to (in its last chunk).
		payload["stream_options"] = map[string]any{"include_usage": true}
	}
	if n := cmpPositive(req.MaxTokens, metadataInt(req.Metadata, "max_tokens", "max_output_tokens"), p.maxTokens); n > 0 {
		payload[cmpOr(p.outputField, "max_tokens")] = n
	}
	if req.CacheKey != "" {
		// Requests of one session share their prefix: the key routes them
		// to the same prompt cache.
		payload["prompt_cache_key"] = req.CacheKey
	}
	return marshalPayload(name, payload, p.extraBody, req.Model, stream)
}

// marshalPayload adds the profile's extra body fields and the stream flag to
// payload and encodes it.
func marshalPayload(name string, payload map[string]any, extraBody func(string) map[string]any, model string, stream bool) ([]byte, error) {
	if extraBody != nil {
		for k, v := range extraBody(model) {
			payload[k] = v
		}
	}
	if stream {
		payload["stream"] = true
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINVALID, err, "%s: request is not JSON", name)
	}
	return b, nil
}

// schemaOrEmpty is a tool's input schema, or the empty object schema.
func schemaOrEmpty(s map[string]any) map[string]any {
	if len(s) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}
