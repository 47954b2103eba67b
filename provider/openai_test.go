package provider

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

// conversation exercises every mapping rule: system, user, an assistant step
// with tool calls and no text, an assistant step with text and a call, two
// tool results in a row, then a final user message.
var conversation = demiurge.ModelRequest{
	Model: "m-1",
	Messages: []demiurge.ModelMessage{
		{Role: "system", Content: "be brief"},
		{Role: "system", Content: "use tools"},
		{Role: "user", Content: "list and read"},
		{Role: "assistant", ToolCalls: []demiurge.ToolCall{
			{ID: "c1", Name: "tools_list", Arguments: nil},
			{ID: "c2", Name: "read", Arguments: map[string]any{"path": "a.txt"}},
		}},
		{Role: "tool", Name: "tools_list", ToolCallID: "c1", Content: "read, write"},
		{Role: "tool", Name: "read", ToolCallID: "c2", Content: "hello"},
		{Role: "assistant", Content: "one more", ToolCalls: []demiurge.ToolCall{{ID: "c3", Name: "read", Arguments: map[string]any{"n": 2}}}},
		{Role: "tool", Name: "read", Content: "bye"},
		{Role: "user", Content: "thanks"},
	},
	Tools: []demiurge.ToolSpec{
		{Name: "tools_list", Description: "list tools"},
		{Name: "read", Description: "read a file", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}},
	},
	Metadata: map[string]any{"turn_id": "turn_1", "max_tokens": 321},
}

func TestOpenAIRequestShape(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"choices":[{"message":{"content":"ok"}}]}`)
	})
	p := newTestOpenAI(t, srv.URL+"/v1/", testOptions(&sleepLog{}))
	if _, err := p.Complete(context.Background(), conversation, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.path, "/v1/chat/completions"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	for h, want := range map[string]string{
		"Authorization": "Bearer " + testKey,
		"Content-Type":  "application/json",
		"Accept":        "application/json",
	} {
		if got := rec.header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	jsonEqual(t, "request", rec.lastBody(t), `{
		"model": "m-1",
		"max_tokens": 321,
		"messages": [
			{"role": "system", "content": "be brief"},
			{"role": "system", "content": "use tools"},
			{"role": "user", "content": "list and read"},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "tools_list", "arguments": "{}"}},
				{"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]},
			{"role": "tool", "tool_call_id": "c1", "name": "tools_list", "content": "read, write"},
			{"role": "tool", "tool_call_id": "c2", "name": "read", "content": "hello"},
			{"role": "assistant", "content": "one more", "tool_calls": [
				{"id": "c3", "type": "function", "function": {"name": "read", "arguments": "{\"n\":2}"}}]},
			{"role": "tool", "name": "read", "content": "bye"},
			{"role": "user", "content": "thanks"}
		],
		"tools": [
			{"type": "function", "function": {"name": "tools_list", "description": "list tools", "parameters": {"type": "object", "properties": {}}}},
			{"type": "function", "function": {"name": "read", "description": "read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
		]
	}`)
}

func TestOpenAIRequestOmitsEmptyToolsAndAddsExtraBody(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"choices":[{"message":{"content":"ok"}}]}`)
	})
	p, err := NewOpenAI(Endpoint{
		Name: "deepseek", BaseURL: srv.URL + "/chat/completions", APIKey: demiurge.NewSecret(testKey),
		Headers: map[string]string{"X-Title": "Demiurge", "Authorization": "Bearer not-this"}, ExtraBody: deepseekThinking,
		Options: testOptions(&sleepLog{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := demiurge.ModelRequest{Model: "deepseek-reasoner", Messages: []demiurge.ModelMessage{{Role: "user", Content: "hi"}}}
	if _, err := p.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.path, "/chat/completions"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got := rec.header.Get("X-Title"); got != "Demiurge" {
		t.Errorf("X-Title = %q", got)
	}
	if got := rec.header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("a profile header replaced the credential: %q", got)
	}
	jsonEqual(t, "request", rec.lastBody(t), `{"model":"deepseek-reasoner","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled"}}`)
}

func TestOpenAIBaseURLWithQuery(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"choices":[{"message":{"content":"ok"}}]}`)
	})
	p := newTestOpenAI(t, srv.URL+"/deploy/v1/?api-version=2024-06-01", testOptions(&sleepLog{}))
	if _, err := p.Complete(context.Background(), hello, nil); err != nil {
		t.Fatal(err)
	}
	if rec.path != "/deploy/v1/chat/completions" || rec.query != "api-version=2024-06-01" {
		t.Errorf("path %q query %q", rec.path, rec.query)
	}
}

func TestOpenAIPlainResponse(t *testing.T) {
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"thinking aloud",
			"tool_calls":[
				{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":\"x\",\"n\":3}"}},
				{"id":"call_b","type":"function","function":{"name":"bad","arguments":"{not json"}},
				{"id":"call_c","type":"function","function":{"name":"list","arguments":"[1,2]"}},
				{"type":"function","function":{"name":"none","arguments":""}}]},
			"finish_reason":"tool_calls"}]}`)
	})
	resp, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Content, "thinking aloud"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	want := []demiurge.ToolCall{
		{ID: "call_a", Name: "read", Arguments: map[string]any{"path": "x", "n": 3.0}},
		{ID: "call_b", Name: "bad", Arguments: map[string]any{"_raw": "{not json"}},
		{ID: "call_c", Name: "list", Arguments: map[string]any{"_raw": "[1,2]"}},
		{ID: "call_4", Name: "none", Arguments: map[string]any{}},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %#v\nwant %#v", resp.ToolCalls, want)
	}
	if got := resp.Raw["id"]; got != "chatcmpl-1" {
		t.Errorf("raw id = %v", got)
	}
}

func TestOpenAIStream(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w,
			": keep-alive comment\n\n",
			data(`{"id":"c-9","model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`),
			data(`{"choices":[{"index":0,"delta":{"content":"lo"}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"write","arguments":"{\"x\":"}}]}}]}`),
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"a\"}}]}}]}\r\n\r\n",
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}},{"index":0,"function":{"arguments":"\"}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			data(`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`),
			data(`[DONE]`),
		)
	})
	cb, got := collect()
	resp, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, cb)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got(), []string{"Hel", "lo"}) {
		t.Errorf("deltas = %q", got())
	}
	if resp.Content != "Hello" {
		t.Errorf("content = %q", resp.Content)
	}
	want := []demiurge.ToolCall{
		{ID: "call_1", Name: "read", Arguments: map[string]any{"path": "a"}},
		{ID: "call_2", Name: "write", Arguments: map[string]any{"x": 1.0}},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %#v\nwant %#v", resp.ToolCalls, want)
	}
	jsonEqual(t, "raw", resp.Raw, `{"streamed":true,"id":"c-9","model":"m-1","finish_reason":"tool_calls","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
	if resp.Usage != (demiurge.Usage{InputTokens: 5, OutputTokens: 2}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	body := rec.lastBody(t)
	if body["stream"] != true {
		t.Errorf("request stream = %v, want true", body["stream"])
	}
	// A stream reports its usage only when asked to.
	if opts, _ := body["stream_options"].(map[string]any); opts["include_usage"] != true {
		t.Errorf("request stream_options = %v, want include_usage", body["stream_options"])
	}
	if got := rec.header.Get("Accept"); got != "text/event-stream" {
		t.Errorf("Accept = %q", got)
	}
}

func TestOpenAIStreamWithoutIndexOrDone(t *testing.T) {
	// Some compatible servers omit tool-call indexes and the [DONE] line.
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w,
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"k\""}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":{"j":2}}}]},"finish_reason":"tool_calls"}]}`),
		)
	})
	cb, _ := collect()
	resp, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, cb)
	if err != nil {
		t.Fatal(err)
	}
	want := []demiurge.ToolCall{
		{ID: "a", Name: "f", Arguments: map[string]any{"k": 1.0}},
		{ID: "b", Name: "g", Arguments: map[string]any{"j": 2.0}},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %#v\nwant %#v", resp.ToolCalls, want)
	}
}

func TestOpenAIStreamTruncated(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, data(`{"choices":[{"index":0,"delta":{"content":"par"}}]}`))
	})
	cb, got := collect()
	_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, cb)
	checkErr(t, err, demiurge.EUNAVAILABLE, "openai: stream ended before completion")
	if rec.calls() != 1 {
		t.Errorf("calls = %d: a stream that produced output must not be retried", rec.calls())
	}
	if !reflect.DeepEqual(got(), []string{"par"}) {
		t.Errorf("deltas = %q", got())
	}
}

func TestOpenAIStreamMalformedChunk(t *testing.T) {
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, data(`{"choices":[{"index":0,"delta":{"content":"x"}}]}`), data(`{"choices": [`))
	})
	cb, _ := collect()
	_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, cb)
	checkErr(t, err, demiurge.EINVALID, "openai: malformed stream chunk")
}

func TestOpenAIErrorInsideStream(t *testing.T) {
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, data(`{"choices":[{"index":0,"delta":{"content":"x"}}]}`),
			data(`{"error":{"type":"invalid_request_error","message":"context too long for `+testKey+`"}}`))
	})
	cb, _ := collect()
	_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, cb)
	checkErr(t, err, demiurge.EINVALID, "openai: stream error: context too long for <redacted:API_KEY>")
}

func TestOpenAIResponseShapes(t *testing.T) {
	tests := []struct {
		name, body string
		code, want string
		content    string
	}{
		{name: "content parts", body: `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`, content: "ab"},
		{name: "null content", body: `{"choices":[{"message":{"content":null}}]}`, content: ""},
		{name: "no choices", body: `{"choices":[]}`, code: demiurge.EINVALID, want: "openai: malformed response: no choices"},
		{name: "not JSON", body: `<html>oops</html>`, code: demiurge.EINVALID, want: "openai: malformed response"},
		{name: "error body with 200", body: `{"error":{"type":"invalid_request_error","message":"nope"}}`, code: demiurge.EINVALID, want: "openai: stream error: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, tt.body) })
			resp, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, nil)
			if tt.code != "" {
				checkErr(t, err, tt.code, tt.want)
				if rec.calls() != 1 {
					t.Errorf("calls = %d, want 1 (no retry of a malformed response)", rec.calls())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tt.content {
				t.Errorf("content = %q, want %q", resp.Content, tt.content)
			}
		})
	}
}

func TestOpenAIRequestValidation(t *testing.T) {
	p := newTestOpenAI(t, "http://127.0.0.1:1", testOptions(&sleepLog{}))
	_, err := p.Complete(context.Background(), demiurge.ModelRequest{}, nil)
	checkErr(t, err, demiurge.EINVALID, "openai: request has no model")

	bad := demiurge.ModelRequest{Model: "m", Messages: []demiurge.ModelMessage{{Role: "assistant", ToolCalls: []demiurge.ToolCall{{ID: "x", Name: "f", Arguments: map[string]any{"c": make(chan int)}}}}}}
	_, err = p.Complete(context.Background(), bad, nil)
	checkErr(t, err, demiurge.EINVALID, `openai: messages[0]: arguments of tool call "f" are not JSON`)
}

func TestNewEndpointErrors(t *testing.T) {
	tests := []struct {
		name string
		ep   Endpoint
		want string
	}{
		{"no key", Endpoint{BaseURL: "https://x.test"}, "provider openai: API key missing"},
		{"relative URL", Endpoint{BaseURL: "x.test/v1", APIKey: demiurge.NewSecret("k")}, "provider openai: base URL \"x.test/v1\" is not an absolute http or https URL"},
		{"ftp URL", Endpoint{BaseURL: "ftp://x.test", APIKey: demiurge.NewSecret("k")}, "provider openai: base URL \"ftp://x.test\" is not an absolute http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.ep)
			checkErr(t, err, demiurge.ECONFIG, tt.want)
		})
	}
	_, err := NewOpenAI(Endpoint{BaseURL: "ftp://user:hunter2@x.test", APIKey: demiurge.NewSecret("k")})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v: must fail without quoting the URL password", err)
	}
}
