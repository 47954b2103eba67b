package provider

import (
	"cmp"
	"context"
	"net/http"
	"strings"

	"github.com/demiurge/demiurge"
)

// AnthropicVersion is the anthropic-version header sent on every request.
const AnthropicVersion = "2023-06-01"

// defaultAnthropicMaxTokens is max_tokens when neither the request metadata
// nor Options name one (the API requires the field).
const defaultAnthropicMaxTokens = 4096

// Anthropic is a client of the Anthropic Messages API. It is safe for
// concurrent use.
type Anthropic struct {
	c         *client
	extraBody func(model string) map[string]any
	maxTokens int
}

var _ demiurge.Provider = (*Anthropic)(nil)

// NewAnthropic returns a Messages client for e. The request URL is
// e.BaseURL + "/v1/messages" for a base without a path (the Anthropic SDKs'
// https://api.anthropic.com); a base with a path gets "/messages" (the
// original's rule: https://api.anthropic.com/v1, or a vendor's
// https://api.minimax.io/anthropic), and one that ends with /messages is
// used as is. With e.BearerAuth the key goes in "Authorization: Bearer". It fails
// with ECONFIG when the base URL is not an absolute http(s) URL or the key is
// empty.
func NewAnthropic(e Endpoint) (*Anthropic, error) {
	c, err := e.newClient("anthropic", anthropicURL, func(h http.Header, key string) {
		if e.BearerAuth {
			h.Set("Authorization", "Bearer "+key)
		} else {
			h.Set("x-api-key", key)
		}
		h.Set("anthropic-version", AnthropicVersion)
	})
	if err != nil {
		return nil, err
	}
	maxTokens := e.Options.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultAnthropicMaxTokens
	}
	return &Anthropic{c: c, extraBody: e.ExtraBody, maxTokens: maxTokens}, nil
}

func anthropicURL(base string) string {
	switch {
	case strings.HasSuffix(base, "/messages"):
		return base
	case base == "":
		return "/v1/messages"
	default:
		return base + "/messages"
	}
}

// Complete sends req. With stream == nil it asks for one JSON response;
// otherwise it asks for a server-sent event stream and passes each text delta
// to stream, on the calling goroutine, as it arrives. Errors: see the
// package documentation.
func (p *Anthropic) Complete(ctx context.Context, req demiurge.ModelRequest, stream func(delta string)) (demiurge.ModelResponse, error) {
	body, err := p.requestBody(req, stream != nil)
	if err != nil {
		return demiurge.ModelResponse{}, err
	}
	return p.c.complete(ctx, body, stream, decodeAnthropicResponse, func() streamDecoder { return newAnthropicStream(p.c.name) })
}

// Wire shapes of a Messages request.
type (
	anMessage struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // a string, or a list of blocks
	}
	anText struct {
		Type         string   `json:"type"`
		Text         string   `json:"text"`
		CacheControl *anCache `json:"cache_control,omitempty"`
	}
	anToolUse struct {
		Type         string         `json:"type"`
		ID           string         `json:"id"`
		Name         string         `json:"name"`
		Input        map[string]any `json:"input"`
		CacheControl *anCache       `json:"cache_control,omitempty"`
	}
	anToolResult struct {
		Type         string   `json:"type"`
		ToolUseID    string   `json:"tool_use_id"`
		Content      string   `json:"content"`
		CacheControl *anCache `json:"cache_control,omitempty"`
	}
	anTool struct {
		Name         string         `json:"name"`
		Description  string         `json:"description"`
		InputSchema  map[string]any `json:"input_schema"`
		CacheControl *anCache       `json:"cache_control,omitempty"`
	}
	// anCache is a prompt-cache breakpoint: the prefix up to and including
	// the block that carries it is cached.
	anCache struct {
		Type string `json:"type"`
	}
)

// ephemeral is the one cache breakpoint kind of the Messages API.
var ephemeral = &anCache{Type: "ephemeral"}

// requestBody maps req onto the Messages payload:
// system messages become the top-level system text joined with "\n\n"; each
// tool message becomes a tool_result block, and consecutive ones share one
// user message (the API wants all results of one assistant turn together);
// an assistant message with tool calls becomes [text?, tool_use…].
func (p *Anthropic) requestBody(req demiurge.ModelRequest, stream bool) ([]byte, error) {
	name := p.c.name
	if strings.TrimSpace(req.Model) == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "%s: request has no model", name)
	}
	var (
		system  []string
		msgs    []anMessage
		results []any // blocks of the open tool-result user message, if any
	)
	flush := func() {
		if results != nil {
			msgs = append(msgs, anMessage{Role: "user", Content: results})
			results = nil
		}
	}
	stableEnd := -1 // index in msgs of the message that ends the stable prefix
	for i, m := range req.Messages {
		if m.Role != "tool" {
			flush()
		}
		if i == req.StableMessages && i > 0 && m.Role != "tool" {
			stableEnd = len(msgs) - 1
		}
		switch m.Role {
		case "system":
			if m.Content != "" {
				system = append(system, m.Content)
			}
		case "user":
			msgs = append(msgs, anMessage{Role: "user", Content: m.Content})
		case "assistant":
			if len(m.ToolCalls) == 0 {
				msgs = append(msgs, anMessage{Role: "assistant", Content: m.Content})
				continue
			}
			var blocks []any
			if m.Content != "" {
				blocks = append(blocks, anText{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anToolUse{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: arguments(tc.Arguments)})
			}
			msgs = append(msgs, anMessage{Role: "assistant", Content: blocks})
		case "tool":
			id := cmp.Or(m.ToolCallID, m.Name, "tool_call")
			results = append(results, anToolResult{Type: "tool_result", ToolUseID: id, Content: m.Content})
		default:
			return nil, demiurge.Errorf(demiurge.EINVALID, "%s: messages[%d]: unsupported role %q (want system, user, assistant or tool)", name, i, m.Role)
		}
	}
	flush()
	if req.StableMessages >= len(req.Messages) && req.StableMessages > 0 {
		stableEnd = len(msgs) - 1
	}
	if msgs == nil {
		msgs = []anMessage{}
	}
	cache := req.CacheKey != ""
	if cache && stableEnd >= 0 {
		msgs[stableEnd] = markCached(msgs[stableEnd])
	}

	maxTokens := cmpPositive(req.MaxTokens, metadataInt(req.Metadata, "max_tokens", "max_output_tokens"), p.maxTokens)
	payload := map[string]any{"model": req.Model, "max_tokens": maxTokens, "messages": msgs}
	if len(system) > 0 {
		text := strings.Join(system, "\n\n")
		if cache {
			payload["system"] = []anText{{Type: "text", Text: text, CacheControl: ephemeral}}
		} else {
			payload["system"] = text
		}
	}
	if len(req.Tools) > 0 {
		tools := make([]anTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			tools = append(tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.InputSchema)})
		}
		if cache {
			tools[len(tools)-1].CacheControl = ephemeral
		}
		payload["tools"] = tools
	}
	return marshalPayload(name, payload, p.extraBody, req.Model, stream)
}

// markCached puts a cache breakpoint on the last block of m (a text
// content becomes one text block).
func markCached(m anMessage) anMessage {
	switch c := m.Content.(type) {
	case string:
		if c == "" {
			return m
		}
		m.Content = []any{anText{Type: "text", Text: c, CacheControl: ephemeral}}
	case []any:
		if len(c) == 0 {
			return m
		}
		blocks := append([]any(nil), c...)
		switch b := blocks[len(blocks)-1].(type) {
		case anText:
			b.CacheControl = ephemeral
			blocks[len(blocks)-1] = b
		case anToolUse:
			b.CacheControl = ephemeral
			blocks[len(blocks)-1] = b
		case anToolResult:
			b.CacheControl = ephemeral
			blocks[len(blocks)-1] = b
		}
		m.Content = blocks
	}
	return m
}
