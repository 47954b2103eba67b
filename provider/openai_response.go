package provider

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
)

// maxResponseBody bounds a non-streamed response.
const maxResponseBody = 32 << 20

// readJSONBody reads a whole non-streamed response body, bounded.
func readJSONBody(name string, r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxResponseBody+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxResponseBody {
		return nil, demiurge.Errorf(demiurge.EINVALID, "%s: response exceeds %d MiB", name, maxResponseBody>>20)
	}
	return raw, nil
}

// oaText reads a content field that is a string, null, or (on some
// compatible servers) a list of {type: text, text} parts.
func oaText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// oaArguments reads function.arguments: a JSON string per the API, or an
// object on some compatible servers.
func oaArguments(raw json.RawMessage) map[string]any {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return decodeArguments(s)
	}
	return objectInput(raw)
}

// decodeOpenAIResponse decodes a non-streamed Chat Completions response:
// choices[0].message's content and tool calls; Raw is the whole body.
func decodeOpenAIResponse(name string, r io.Reader) (demiurge.ModelResponse, error) {
	raw, err := readJSONBody(name, r)
	if err != nil {
		return demiurge.ModelResponse{}, err
	}
	var body struct {
		Choices []struct {
			Message struct {
				Content   json.RawMessage `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Error *apiError `json:"error"`
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.EINVALID, "%s: malformed response: %v", name, err)
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.EINVALID, "%s: malformed response: %v", name, err)
	}
	if body.Error != nil && len(body.Choices) == 0 {
		return demiurge.ModelResponse{}, streamError(name, *body.Error, false)
	}
	if len(body.Choices) == 0 {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.EINVALID, "%s: malformed response: no choices", name)
	}
	msg := body.Choices[0].Message
	resp := demiurge.ModelResponse{Content: oaText(msg.Content), Raw: all}
	for i, tc := range msg.ToolCalls {
		id := cmp.Or(tc.ID, fmt.Sprintf("call_%d", i+1))
		resp.ToolCalls = append(resp.ToolCalls, demiurge.ToolCall{ID: id, Name: tc.Function.Name, Arguments: oaArguments(tc.Function.Arguments)})
	}
	return resp, nil
}

// openaiStream assembles a streamed Chat Completions response from its
// chunks: content deltas are concatenated (and emitted), tool-call deltas are
// merged by index with their argument fragments appended in order.
type openaiStream struct {
	name    string
	content strings.Builder
	calls   []*oaStreamCall
	id      string
	model   string
	finish  string
	usage   any
	done    bool // [DONE] seen
	emitted bool // a delta went to the caller: no retry from here on
}

type oaStreamCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

type oaChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error *apiError       `json:"error"`
}

func newOpenAIStream(name string) *openaiStream { return &openaiStream{name: name} }

// read consumes events until [DONE]. A stream that ends without [DONE] is
// accepted when a finish_reason was seen (some compatible servers omit the
// terminator) and is otherwise a truncated response.
func (s *openaiStream) read(r *sseReader, emit func(string)) error {
	for !s.done {
		ev, err := r.next()
		if err == io.EOF {
			if s.finish != "" {
				return nil
			}
			return demiurge.Errorf(demiurge.EUNAVAILABLE, "%s: stream ended before completion", s.name)
		}
		if err != nil {
			return err
		}
		if err := s.handle(ev, emit); err != nil {
			return err
		}
	}
	return nil
}

func (s *openaiStream) handle(ev sseEvent, emit func(string)) error {
	data := strings.TrimSpace(ev.Data)
	switch {
	case data == "":
		return nil
	case data == "[DONE]":
		s.done = true
		return nil
	}
	var ch oaChunk
	if err := json.Unmarshal([]byte(data), &ch); err != nil {
		return demiurge.Errorf(demiurge.EINVALID, "%s: malformed stream chunk: %v", s.name, err)
	}
	if ch.Error != nil {
		return streamError(s.name, *ch.Error, s.emitted)
	}
	s.id = cmp.Or(s.id, ch.ID)
	s.model = cmp.Or(s.model, ch.Model)
	if len(ch.Usage) > 0 && string(ch.Usage) != "null" {
		var u any
		if json.Unmarshal(ch.Usage, &u) == nil {
			s.usage = u
		}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue // only the first choice is asked for
		}
		if text := oaText(c.Delta.Content); text != "" {
			s.content.WriteString(text)
			s.emitted = true
			emit(text)
		}
		for _, tc := range c.Delta.ToolCalls {
			call := s.call(tc.Index, tc.ID)
			call.id = cmp.Or(call.id, tc.ID)
			call.name = cmp.Or(call.name, tc.Function.Name)
			var frag string
			if json.Unmarshal(tc.Function.Arguments, &frag) == nil {
				call.args.WriteString(frag)
			} else if len(tc.Function.Arguments) > 0 && string(tc.Function.Arguments) != "null" {
				call.args.Write(tc.Function.Arguments) // an object, sent whole
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.finish = *c.FinishReason
		}
	}
	return nil
}

// call finds the tool call a delta belongs to: by index when the server sends
// one, otherwise a new id starts a new call and no id continues the last.
func (s *openaiStream) call(index *int, id string) *oaStreamCall {
	if index != nil {
		for _, c := range s.calls {
			if c.index == *index {
				return c
			}
		}
		c := &oaStreamCall{index: *index}
		s.calls = append(s.calls, c)
		return c
	}
	if n := len(s.calls); n > 0 && (id == "" || s.calls[n-1].id == id) {
		return s.calls[n-1]
	}
	next := 0
	for _, c := range s.calls {
		next = max(next, c.index+1)
	}
	c := &oaStreamCall{index: next}
	s.calls = append(s.calls, c)
	return c
}

func (s *openaiStream) response() demiurge.ModelResponse {
	resp := demiurge.ModelResponse{Content: s.content.String(), Raw: map[string]any{"streamed": true}}
	for k, v := range map[string]string{"id": s.id, "model": s.model, "finish_reason": s.finish} {
		if v != "" {
			resp.Raw[k] = v
		}
	}
	if s.usage != nil {
		resp.Raw["usage"] = s.usage
	}
	calls := append([]*oaStreamCall(nil), s.calls...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	for i, c := range calls {
		id := cmp.Or(c.id, fmt.Sprintf("call_%d", i+1))
		resp.ToolCalls = append(resp.ToolCalls, demiurge.ToolCall{ID: id, Name: c.name, Arguments: decodeArguments(c.args.String())})
	}
	return resp
}
