package host_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge/tokens"
)

// windowServer is a loopback model endpoint that enforces a context
// window: it counts every request with a real tokenizer, the way the
// client frames it, and refuses one that does not fit with the vendor's
// own error (HTTP 400 context_length_exceeded, or Anthropic's "prompt is
// too long"). It scripts an agent that reads a large file once per user
// message and then answers, and it summarises when asked to compact.
type windowServer struct {
	t      *testing.T
	window int
	// claimed, when set, is the window the client is told it has (the
	// profile's context_window); otherwise window.
	claimed   int
	counter   tokens.Counter
	anthropic bool
	srv       *httptest.Server

	mu        sync.Mutex // guards the fields below
	requests  int
	rejected  []string
	summaries int
	maxPrompt int
	last      []wireMessage // the newest agent request's messages
	cacheKeys map[string]bool
	marked    int // requests that carried prompt-cache breakpoints
	noLimit   int // requests without an output limit
	// held, when set, receives each compaction request, which is then
	// answered only once its client is gone (a crash test's child).
	held chan struct{}
}

// wireMessage is a request message of either protocol, reduced to what
// the server counts and scripts on.
type wireMessage struct {
	Role    string
	Text    string // all text of the message, tool results and call arguments included
	Results int    // tool_result blocks (Anthropic) or 1 for a tool message
}

func newWindowServer(t *testing.T, window int, anthropic bool) *windowServer {
	s := &windowServer{t: t, window: window, counter: tokens.For(tokens.O200k), anthropic: anthropic, cacheKeys: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *windowServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	msgs, system, marked := s.parse(body)
	prompt := tokens.PerRequest + s.counter.Count(system)
	for _, m := range msgs {
		prompt += tokens.PerMessage + s.counter.Count(m.Role) + s.counter.Count(m.Text)
	}
	if tools, ok := body["tools"].([]any); ok {
		b, _ := json.Marshal(tools)
		prompt += s.counter.Count(string(b))
	}
	maxTokens, _ := body["max_tokens"].(float64)
	summary := strings.Contains(system, "You compact the earlier part")

	s.mu.Lock()
	s.requests++
	if maxTokens <= 0 {
		s.noLimit++
	}
	if key, _ := body["prompt_cache_key"].(string); key != "" {
		s.cacheKeys[key] = true
	}
	if marked {
		s.marked++
	}
	over := prompt+int(maxTokens) > s.window
	if over {
		s.rejected = append(s.rejected, fmt.Sprintf("request %d: %d prompt + %d output tokens > %d", s.requests, prompt, int(maxTokens), s.window))
	} else {
		s.maxPrompt = max(s.maxPrompt, prompt)
		if summary {
			s.summaries++
		} else {
			s.last = msgs
		}
	}
	s.mu.Unlock()
	if over {
		s.refuse(w, prompt+int(maxTokens))
		return
	}

	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	if summary && held != nil {
		held <- struct{}{}
		<-r.Context().Done()
		return
	}
	last := msgs[len(msgs)-1]
	switch {
	case summary:
		s.text(w, prompt, "Summary: the user asked for turns and the agent read big.txt each time.")
	case last.Role == "user" && last.Results == 0:
		s.readFile(w, prompt)
	default:
		s.text(w, prompt, "read it; "+lastUser(msgs))
	}
}

// lastUser is the text of the newest user message that is not tool results.
func lastUser(msgs []wireMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" && msgs[i].Results == 0 {
			return msgs[i].Text
		}
	}
	return ""
}

func (s *windowServer) refuse(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	if s.anthropic {
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, n, s.window)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, s.window, n)
}

// parse reads the messages of either protocol; marked reports Anthropic
// cache_control breakpoints.
func (s *windowServer) parse(body map[string]any) (msgs []wireMessage, system string, marked bool) {
	raw, _ := json.Marshal(body)
	marked = strings.Contains(string(raw), `"cache_control"`)
	if sys, ok := body["system"]; ok {
		system = blocksText(sys)
	}
	list, _ := body["messages"].([]any)
	for _, m := range list {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		wm := wireMessage{Role: role}
		switch role {
		case "system":
			system += blocksText(mm["content"])
			continue
		case "tool":
			wm.Results = 1
		}
		wm.Text = blocksText(mm["content"])
		if blocks, ok := mm["content"].([]any); ok {
			for _, b := range blocks {
				if bm, _ := b.(map[string]any); bm["type"] == "tool_result" {
					wm.Results++
				}
			}
		}
		if calls, ok := mm["tool_calls"]; ok {
			b, _ := json.Marshal(calls)
			wm.Text += string(b)
		}
		msgs = append(msgs, wm)
	}
	return msgs, system, marked
}

// blocksText is the text of a string content or of a block list.
func blocksText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, blk := range c {
			m, _ := blk.(map[string]any)
			switch m["type"] {
			case "text":
				t, _ := m["text"].(string)
				b.WriteString(t)
			case "tool_result":
				t, _ := m["content"].(string)
				b.WriteString(t)
			case "tool_use":
				in, _ := json.Marshal(m["input"])
				b.Write(in)
			}
		}
		return b.String()
	}
	return ""
}

// text answers with a final message, streamed.
func (s *windowServer) text(w http.ResponseWriter, prompt int, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	if s.anthropic {
		anthropicEvents(w, prompt, []string{
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, text),
			`{"type":"content_block_stop","index":0}`,
		}, "end_turn")
		return
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	openAIUsage(w, prompt)
}

// readFile answers with one read_file call of big.txt, streamed.
func (s *windowServer) readFile(w http.ResponseWriter, prompt int) {
	w.Header().Set("Content-Type", "text/event-stream")
	s.mu.Lock()
	id := fmt.Sprintf("call_%d", s.requests)
	s.mu.Unlock()
	if s.anthropic {
		anthropicEvents(w, prompt, []string{
			fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":%q,"name":"read_file","input":{}}}`, id),
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"big.txt\"}"}}`,
			`{"type":"content_block_stop","index":0}`,
		}, "tool_use")
		return
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":%q,\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\": \\\"big.txt\\\"}\"}}]}}]}\n\n", id)
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
	openAIUsage(w, prompt)
}

func openAIUsage(w io.Writer, prompt int) {
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":12,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\n", prompt, prompt+12, prompt/2)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func anthropicEvents(w io.Writer, prompt int, blocks []string, stop string) {
	fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":%d,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n", prompt)
	for _, b := range blocks {
		var kind struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(b), &kind)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind.Type, b)
	}
	fmt.Fprintf(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":%q},\"usage\":{\"output_tokens\":12}}\n\n", stop)
	fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
}
