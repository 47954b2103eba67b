package provider

import (
	"cmp"
	"encoding/json"
	"io"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
)

// anBlockIn is a content block of a response (whole, or as opened by
// content_block_start).
type anBlockIn struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// decodeAnthropicResponse decodes a non-streamed Messages response: text
// blocks joined with "\n", tool_use blocks as calls (a non-object input v
// becomes {"_raw": v}); Raw is the whole body.
func decodeAnthropicResponse(name string, r io.Reader) (demiurge.ModelResponse, error) {
	raw, err := readJSONBody(name, r)
	if err != nil {
		return demiurge.ModelResponse{}, err
	}
	var body struct {
		Type    string      `json:"type"`
		Content []anBlockIn `json:"content"`
		Error   *apiError   `json:"error"`
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.EINVALID, "%s: malformed response: %v", name, err)
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.EINVALID, "%s: malformed response: %v", name, err)
	}
	if body.Type == "error" || body.Error != nil {
		e := apiError{Type: "api_error"}
		if body.Error != nil {
			e = *body.Error
		}
		return demiurge.ModelResponse{}, streamError(name, e, false)
	}
	if body.Content == nil {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.EINVALID, "%s: malformed response: no content", name)
	}
	var texts []string
	resp := demiurge.ModelResponse{Raw: all}
	for _, b := range body.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case "tool_use":
			resp.ToolCalls = append(resp.ToolCalls, demiurge.ToolCall{ID: b.ID, Name: b.Name, Arguments: objectInput(b.Input)})
		}
	}
	resp.Content = strings.Join(texts, "\n")
	return resp, nil
}

// anthropicStream assembles a streamed Messages response from its events.
// Text blocks are joined with "\n" as in the non-streamed form, and the
// separator is emitted too, so the deltas add up to Content.
type anthropicStream struct {
	name     string
	blocks   []*anStreamBlock
	id       string
	model    string
	stop     string
	usage    map[string]any
	done     bool // message_stop seen
	emitted  bool // a delta went to the caller: no retry from here on
	wroteAny bool // some text block has text (the next one starts with "\n")
}

type anStreamBlock struct {
	index   int
	kind    string // text | tool_use | other
	text    strings.Builder
	id      string
	name    string
	input   json.RawMessage // the input of content_block_start
	partial strings.Builder // input_json_delta fragments
}

type anEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		ID    string         `json:"id"`
		Model string         `json:"model"`
		Usage map[string]any `json:"usage"`
	} `json:"message"`
	ContentBlock anBlockIn `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage map[string]any `json:"usage"`
	Error *apiError      `json:"error"`
}

func newAnthropicStream(name string) *anthropicStream { return &anthropicStream{name: name} }

// read consumes events until message_stop. A stream that ends without it is
// accepted when message_delta carried a stop_reason, and is otherwise a
// truncated response.
func (s *anthropicStream) read(r *sseReader, emit func(string)) error {
	for !s.done {
		ev, err := r.next()
		if err == io.EOF {
			if s.stop != "" {
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

func (s *anthropicStream) handle(ev sseEvent, emit func(string)) error {
	if strings.TrimSpace(ev.Data) == "" {
		return nil
	}
	var e anEvent
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		return demiurge.Errorf(demiurge.EINVALID, "%s: malformed stream event: %v", s.name, err)
	}
	kind := cmp.Or(e.Type, ev.Event)
	switch kind {
	case "message_start":
		s.id, s.model = e.Message.ID, e.Message.Model
		s.mergeUsage(e.Message.Usage)
	case "content_block_start":
		b := s.block(e.Index, e.ContentBlock.Type)
		b.id, b.name, b.input = e.ContentBlock.ID, e.ContentBlock.Name, e.ContentBlock.Input
		if b.kind == "text" {
			s.text(b, e.ContentBlock.Text, emit)
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			s.text(s.block(e.Index, "text"), e.Delta.Text, emit)
		case "input_json_delta":
			s.block(e.Index, "tool_use").partial.WriteString(e.Delta.PartialJSON)
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		s.mergeUsage(e.Usage)
	case "message_stop":
		s.done = true
	case "error":
		ae := apiError{Type: "api_error"}
		if e.Error != nil {
			ae = *e.Error
		}
		return streamError(s.name, ae, s.emitted)
	}
	// ping, content_block_stop and event types added later need nothing.
	return nil
}

// block returns the block at index, opening it with kind when it is new.
func (s *anthropicStream) block(index int, kind string) *anStreamBlock {
	for _, b := range s.blocks {
		if b.index == index {
			return b
		}
	}
	b := &anStreamBlock{index: index, kind: kind}
	s.blocks = append(s.blocks, b)
	return b
}

func (s *anthropicStream) text(b *anStreamBlock, text string, emit func(string)) {
	if text == "" || b.kind != "text" {
		return
	}
	if b.text.Len() == 0 && s.wroteAny {
		emit("\n")
	}
	b.text.WriteString(text)
	s.wroteAny, s.emitted = true, true
	emit(text)
}

func (s *anthropicStream) mergeUsage(u map[string]any) {
	if len(u) == 0 {
		return
	}
	if s.usage == nil {
		s.usage = map[string]any{}
	}
	for k, v := range u {
		s.usage[k] = v
	}
}

func (s *anthropicStream) response() demiurge.ModelResponse {
	resp := demiurge.ModelResponse{Raw: map[string]any{"streamed": true}}
	for k, v := range map[string]string{"id": s.id, "model": s.model, "stop_reason": s.stop} {
		if v != "" {
			resp.Raw[k] = v
		}
	}
	if s.usage != nil {
		resp.Raw["usage"] = s.usage
	}
	blocks := append([]*anStreamBlock(nil), s.blocks...)
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].index < blocks[j].index })
	var texts []string
	for _, b := range blocks {
		switch b.kind {
		case "text":
			if b.text.Len() > 0 {
				texts = append(texts, b.text.String())
			}
		case "tool_use":
			input := b.input
			if b.partial.Len() > 0 {
				input = json.RawMessage(b.partial.String())
			}
			resp.ToolCalls = append(resp.ToolCalls, demiurge.ToolCall{ID: b.id, Name: b.name, Arguments: objectInput(input)})
		}
	}
	resp.Content = strings.Join(texts, "\n")
	return resp
}
