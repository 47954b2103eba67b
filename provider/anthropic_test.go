package provider

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestAnthropicRequestShape(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"type":"message","content":[{"type":"text","text":"ok"}]}`)
	})
	if _, err := newTestAnthropic(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.path, "/v1/messages"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	for h, want := range map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Accept":            "application/json",
		"Authorization":     "",
	} {
		if got := rec.header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	jsonEqual(t, "request", rec.lastBody(t), `{
		"model": "m-1",
		"max_tokens": 321,
		"system": "be brief\n\nuse tools",
		"messages": [
			{"role": "user", "content": "list and read"},
			{"role": "assistant", "content": [
				{"type": "tool_use", "id": "c1", "name": "tools_list", "input": {}},
				{"type": "tool_use", "id": "c2", "name": "read", "input": {"path": "a.txt"}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "c1", "content": "read, write"},
				{"type": "tool_result", "tool_use_id": "c2", "content": "hello"}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "one more"},
				{"type": "tool_use", "id": "c3", "name": "read", "input": {"n": 2}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "read", "content": "bye"}]},
			{"role": "user", "content": "thanks"}
		],
		"tools": [
			{"name": "tools_list", "description": "list tools", "input_schema": {"type": "object", "properties": {}}},
			{"name": "read", "description": "read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
		]
	}`)
}

func TestAnthropicURLAndDefaults(t *testing.T) {
	tests := []struct {
		suffix, path string
		meta         map[string]any
		maxTokens    float64
	}{
		{"", "/v1/messages", nil, 4096},
		{"/", "/v1/messages", map[string]any{"max_output_tokens": 77.0}, 77},
		{"/v1", "/v1/messages", nil, 4096},
		{"/proxy/v1/messages", "/proxy/v1/messages", map[string]any{"max_tokens": "12"}, 12},
	}
	for _, tt := range tests {
		t.Run(tt.path+tt.suffix, func(t *testing.T) {
			srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, 200, `{"type":"message","content":[]}`)
			})
			req := demiurge.ModelRequest{Model: "c", Messages: []demiurge.ModelMessage{{Role: "tool", Content: "orphan"}}, Metadata: tt.meta}
			if _, err := newTestAnthropic(t, srv.URL+tt.suffix, testOptions(&sleepLog{})).Complete(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			if rec.path != tt.path {
				t.Errorf("path = %q, want %q", rec.path, tt.path)
			}
			body := rec.lastBody(t)
			if body["max_tokens"] != tt.maxTokens {
				t.Errorf("max_tokens = %v, want %v", body["max_tokens"], tt.maxTokens)
			}
			if _, ok := body["system"]; ok {
				t.Error("system sent although no system message exists")
			}
			jsonEqual(t, "messages", body["messages"], `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"tool_call","content":"orphan"}]}]`)
		})
	}
}

func TestAnthropicRejectsUnknownRole(t *testing.T) {
	p := newTestAnthropic(t, "http://127.0.0.1:1", testOptions(&sleepLog{}))
	req := demiurge.ModelRequest{Model: "c", Messages: []demiurge.ModelMessage{{Role: "developer", Content: "x"}}}
	_, err := p.Complete(context.Background(), req, nil)
	checkErr(t, err, demiurge.EINVALID, `anthropic: messages[0]: unsupported role "developer"`)
}

func TestAnthropicPlainResponse(t *testing.T) {
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","stop_reason":"tool_use",
			"content":[
				{"type":"thinking","thinking":"hmm"},
				{"type":"text","text":"first"},
				{"type":"tool_use","id":"tu_1","name":"read","input":{"path":"x"}},
				{"type":"text","text":"second"},
				{"type":"tool_use","id":"tu_2","name":"odd","input":[1,2]},
				{"type":"tool_use","id":"tu_3","name":"none"}]}`)
	})
	resp, err := newTestAnthropic(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Content, "first\nsecond"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	want := []demiurge.ToolCall{
		{ID: "tu_1", Name: "read", Arguments: map[string]any{"path": "x"}},
		{ID: "tu_2", Name: "odd", Arguments: map[string]any{"_raw": []any{1.0, 2.0}}},
		{ID: "tu_3", Name: "none", Arguments: map[string]any{}},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %#v\nwant %#v", resp.ToolCalls, want)
	}
	if resp.Raw["stop_reason"] != "tool_use" {
		t.Errorf("raw = %v", resp.Raw)
	}
}

func TestAnthropicStream(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w,
			event("message_start", `{"type":"message_start","message":{"id":"msg_9","model":"claude-x","usage":{"input_tokens":5}}}`),
			event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			event("ping", `{"type":"ping"}`),
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`),
			event("content_block_stop", `{"type":"content_block_stop","index":0}`),
			event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"tu_1","name":"read","input":{}}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"th\": \"a.txt\"}"}}`),
			event("content_block_stop", `{"type":"content_block_stop","index":1}`),
			event("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"bye"}}`),
			event("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"tu_2","name":"list","input":{}}}`),
			event("content_block_stop", `{"type":"content_block_stop","index":3}`),
			event("content_block_start", `{"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"tu_3","name":"bad","input":{}}}`),
			event("content_block_delta", `{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`),
			event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`),
			event("message_stop", `{"type":"message_stop"}`),
		)
	})
	cb, got := collect()
	resp, err := newTestAnthropic(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), conversation, cb)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got(), []string{"Hel", "lo", "\n", "bye"}) {
		t.Errorf("deltas = %q", got())
	}
	if resp.Content != "Hello\nbye" {
		t.Errorf("content = %q", resp.Content)
	}
	want := []demiurge.ToolCall{
		{ID: "tu_1", Name: "read", Arguments: map[string]any{"path": "a.txt"}},
		{ID: "tu_2", Name: "list", Arguments: map[string]any{}},
		{ID: "tu_3", Name: "bad", Arguments: map[string]any{"_raw": `{"a":`}},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %#v\nwant %#v", resp.ToolCalls, want)
	}
	jsonEqual(t, "raw", resp.Raw, `{"streamed":true,"id":"msg_9","model":"claude-x","stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":9}}`)
	if body := rec.lastBody(t); body["stream"] != true {
		t.Errorf("request stream = %v", body["stream"])
	}
}

func TestAnthropicStreamErrors(t *testing.T) {
	start := event("message_start", `{"type":"message_start","message":{"id":"m"}}`)
	text := event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`)
	tests := []struct {
		name       string
		chunks     [][]string // per request
		code, want string
		calls      int
		content    string
	}{
		{
			name:   "overloaded before output is retried",
			chunks: [][]string{{start, event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}, {start, text, event("message_stop", `{"type":"message_stop"}`)}},
			calls:  2, content: "x",
		},
		{
			name:   "overloaded after output fails",
			chunks: [][]string{{start, text, event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}},
			code:   demiurge.EUNAVAILABLE, want: "anthropic: stream error: Overloaded", calls: 1,
		},
		{
			name:   "invalid request",
			chunks: [][]string{{event("error", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt too long"}}`)}},
			code:   demiurge.EINVALID, want: "anthropic: stream error: prompt too long", calls: 1,
		},
		{
			name:   "authentication",
			chunks: [][]string{{event("error", `{"type":"error","error":{"type":"authentication_error","message":"bad key `+testKey+`"}}`)}},
			code:   demiurge.EUNAUTHORIZED, want: "anthropic: stream error: bad key <redacted:API_KEY>", calls: 1,
		},
		{
			name:   "truncated",
			chunks: [][]string{{start, text}},
			code:   demiurge.EUNAVAILABLE, want: "anthropic: stream ended before completion", calls: 1,
		},
		{
			name:   "ended after stop reason without message_stop",
			chunks: [][]string{{start, text, event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`)}},
			calls:  1, content: "x",
		},
		{
			name:   "malformed event",
			chunks: [][]string{{start, "event: content_block_delta\ndata: {\"type\":\n\n"}},
			code:   demiurge.EINVALID, want: "anthropic: malformed stream event", calls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				writeSSE(w, tt.chunks[min(n, len(tt.chunks))-1]...)
			})
			cb, _ := collect()
			resp, err := newTestAnthropic(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), hello, cb)
			if tt.code != "" {
				checkErr(t, err, tt.code, tt.want)
			} else if err != nil {
				t.Fatal(err)
			} else if resp.Content != tt.content {
				t.Errorf("content = %q, want %q", resp.Content, tt.content)
			}
			if rec.calls() != tt.calls {
				t.Errorf("calls = %d, want %d", rec.calls(), tt.calls)
			}
		})
	}
}

func TestAnthropicHTTPErrors(t *testing.T) {
	srv, rec := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			writeJSON(w, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		writeJSON(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	})
	log := &sleepLog{}
	_, err := newTestAnthropic(t, srv.URL, testOptions(log)).Complete(context.Background(), hello, nil)
	checkErr(t, err, demiurge.EUNAUTHORIZED, "anthropic: HTTP 401: invalid x-api-key")
	if rec.calls() != 2 || len(log.waits()) != 1 || log.waits()[0].Seconds() != 2 {
		t.Errorf("calls %d waits %v: want one 2s wait then the 401", rec.calls(), log.waits())
	}
}

func TestAnthropicMalformedResponse(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"type":"message"`, "anthropic: malformed response"},
		{`{"type":"message"}`, "anthropic: malformed response: no content"},
	}
	for _, tt := range tests {
		srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, tt.body) })
		_, err := newTestAnthropic(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), hello, nil)
		checkErr(t, err, demiurge.EINVALID, tt.want)
	}
}
