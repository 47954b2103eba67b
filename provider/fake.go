package provider

import (
	"context"
	"maps"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
)

// Fake is the offline provider: scripted responses first, then a rule-based
// echo. It needs no key and no network. One Fake serves every
// turn of a process, so its script is consumed in order across turns; it is
// safe for concurrent use (each call takes the next item atomically).
type Fake struct {
	mu     sync.Mutex // guards next
	script []demiurge.ModelResponse
	next   int
}

var _ demiurge.Provider = (*Fake)(nil)

// NewFake returns a Fake that answers with script's items in order, then by
// its rules. The script is not copied; do not change it afterwards.
func NewFake(script []demiurge.ModelResponse) *Fake {
	return &Fake{script: script}
}

// Remaining reports how many scripted responses are left.
func (f *Fake) Remaining() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.script) - f.next
}

// Complete returns the next scripted response or, once the script has run
// out, applies the rules to req: with u the text of the last user message and
// tail the messages after it,
//
//	(a) u contains "tools_list", tail has no tool message and a tool named
//	    tools_list is offered → one call {fake_tool_call_1, tools_list, {}};
//	(b) else tail has a tool message → "[fake] tool result received: <content
//	    of the last tool message>";
//	(c) else "[fake] <u>".
//
// Content is also passed to stream, when not nil, in word-sized deltas. The
// only error is ECANCELED when ctx is already done.
func (f *Fake) Complete(ctx context.Context, req demiurge.ModelRequest, stream func(delta string)) (demiurge.ModelResponse, error) {
	if ctx.Err() != nil {
		return demiurge.ModelResponse{}, demiurge.Errorf(demiurge.ECANCELED, "fake: request cancelled")
	}
	resp, ok := f.take()
	if !ok {
		resp = fakeRule(req)
	}
	if stream != nil {
		streamWords(resp.Content, stream)
	}
	return resp, nil
}

// take pops the next scripted response. Argument maps are copied (one level)
// so that a caller changing what it got does not change the caller's script.
func (f *Fake) take() (demiurge.ModelResponse, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next >= len(f.script) {
		return demiurge.ModelResponse{}, false
	}
	item := f.script[f.next]
	f.next++
	out := demiurge.ModelResponse{
		Content: item.Content,
		Raw:     map[string]any{"provider": "fake", "scripted": true, "index": f.next - 1},
		Usage:   item.Usage,
	}
	for _, tc := range item.ToolCalls {
		args := make(map[string]any, len(tc.Arguments))
		maps.Copy(args, tc.Arguments)
		out.ToolCalls = append(out.ToolCalls, demiurge.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: args})
	}
	return out, true
}

// fakeRule is the unscripted answer; see Complete.
func fakeRule(req demiurge.ModelRequest) demiurge.ModelResponse {
	last := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = i
			break
		}
	}
	u := ""
	if last >= 0 {
		u = req.Messages[last].Content
	}
	lastTool, hasTool := "", false
	for _, m := range req.Messages[last+1:] {
		if m.Role == "tool" {
			lastTool, hasTool = m.Content, true
		}
	}
	raw := map[string]any{"provider": "fake", "scripted": false}
	switch {
	case strings.Contains(u, "tools_list") && !hasTool && offers(req.Tools, "tools_list"):
		return demiurge.ModelResponse{
			ToolCalls: []demiurge.ToolCall{{ID: "fake_tool_call_1", Name: "tools_list", Arguments: map[string]any{}}},
			Raw:       raw,
		}
	case hasTool:
		return demiurge.ModelResponse{Content: "[fake] tool result received: " + lastTool, Raw: raw}
	default:
		return demiurge.ModelResponse{Content: "[fake] " + u, Raw: raw}
	}
}

func offers(tools []demiurge.ToolSpec, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// streamWords passes s to stream in deltas that end after each run of
// spaces, so that joining them gives s back exactly.
func streamWords(s string, stream func(delta string)) {
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			stream(s)
			return
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		stream(s[:j])
		s = s[j:]
	}
}
