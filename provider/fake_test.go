package provider

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
)

var toolsListTool = []demiurge.ToolSpec{{Name: "tools_list"}, {Name: "read"}}

func msgs(pairs ...string) []demiurge.ModelMessage {
	var out []demiurge.ModelMessage
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, demiurge.ModelMessage{Role: pairs[i], Content: pairs[i+1]})
	}
	return out
}

func TestFakeRules(t *testing.T) {
	tests := []struct {
		name    string
		req     demiurge.ModelRequest
		content string
		call    bool
	}{
		{"c echoes the last user message",
			demiurge.ModelRequest{Messages: msgs("system", "soul", "user", "first", "assistant", "[fake] first", "user", "second")},
			"[fake] second", false},
		{"c with no user message",
			demiurge.ModelRequest{Messages: msgs("system", "soul")},
			"[fake] ", false},
		{"a calls tools_list when offered",
			demiurge.ModelRequest{Messages: msgs("user", "please run tools_list now"), Tools: toolsListTool},
			"", true},
		{"a needs the tool offered",
			demiurge.ModelRequest{Messages: msgs("user", "please run tools_list now"), Tools: []demiurge.ToolSpec{{Name: "read"}}},
			"[fake] please run tools_list now", false},
		{"b answers a tool result after the last user message",
			demiurge.ModelRequest{Messages: append(msgs("user", "tools_list"), demiurge.ModelMessage{Role: "assistant"}, demiurge.ModelMessage{Role: "tool", Content: "one"}, demiurge.ModelMessage{Role: "tool", Content: "two"}), Tools: toolsListTool},
			"[fake] tool result received: two", false},
		{"b ignores tool results before the last user message",
			demiurge.ModelRequest{Messages: append(msgs("user", "x"), demiurge.ModelMessage{Role: "tool", Content: "old"}, demiurge.ModelMessage{Role: "user", Content: "tools_list again"}), Tools: toolsListTool},
			"", true},
		{"b with tool result but no user message",
			demiurge.ModelRequest{Messages: []demiurge.ModelMessage{{Role: "system"}, {Role: "tool", Content: "r"}}},
			"[fake] tool result received: r", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := NewFake(nil).Complete(context.Background(), tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tt.content {
				t.Errorf("content = %q, want %q", resp.Content, tt.content)
			}
			var want []demiurge.ToolCall
			if tt.call {
				want = []demiurge.ToolCall{{ID: "fake_tool_call_1", Name: "tools_list", Arguments: map[string]any{}}}
			}
			if !reflect.DeepEqual(resp.ToolCalls, want) {
				t.Errorf("tool calls = %#v, want %#v", resp.ToolCalls, want)
			}
		})
	}
}

func TestFakeScriptConsumedAcrossCalls(t *testing.T) {
	script := []demiurge.ModelResponse{
		{Content: "one"},
		{ToolCalls: []demiurge.ToolCall{{ID: "x", Name: "read", Arguments: map[string]any{"p": "a"}}}},
	}
	f := NewFake(script)
	req := demiurge.ModelRequest{Messages: msgs("user", "hello there")}
	var got []string
	for range 4 {
		resp, err := f.Complete(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := resp.Content
		for _, c := range resp.ToolCalls {
			s += "call:" + c.Name
		}
		got = append(got, s)
	}
	if want := []string{"one", "call:read", "[fake] hello there", "[fake] hello there"}; !reflect.DeepEqual(got, want) {
		t.Errorf("responses = %q, want %q", got, want)
	}
	if f.Remaining() != 0 {
		t.Errorf("remaining = %d", f.Remaining())
	}
}

func TestFakeReturnedArgumentsAreCopies(t *testing.T) {
	script := []demiurge.ModelResponse{{ToolCalls: []demiurge.ToolCall{{ID: "x", Name: "f", Arguments: map[string]any{"k": "v"}}}}}
	f := NewFake(script)
	resp, _ := f.Complete(context.Background(), demiurge.ModelRequest{}, nil)
	resp.ToolCalls[0].Arguments["k"] = "changed"
	if script[0].ToolCalls[0].Arguments["k"] != "v" {
		t.Error("changing a response changed the script")
	}
}

func TestFakeStreams(t *testing.T) {
	cb, got := collect()
	resp, err := NewFake(nil).Complete(context.Background(), demiurge.ModelRequest{Messages: msgs("user", "say  three words")}, cb)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"[fake] ", "say  ", "three ", "words"}; !reflect.DeepEqual(got(), want) {
		t.Errorf("deltas = %q, want %q", got(), want)
	}
	if strings.Join(got(), "") != resp.Content {
		t.Errorf("deltas %q do not add up to %q", got(), resp.Content)
	}
	cb, got = collect()
	_, _ = NewFake(nil).Complete(context.Background(), demiurge.ModelRequest{Messages: msgs("user", "tools_list"), Tools: toolsListTool}, cb)
	if len(got()) != 0 {
		t.Errorf("a tool-call response streamed %q", got())
	}
}

func TestFakeCancelled(t *testing.T) {
	f := NewFake([]demiurge.ModelResponse{{Content: "kept"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.Complete(ctx, demiurge.ModelRequest{}, nil)
	checkErr(t, err, demiurge.ECANCELED, "fake: request cancelled")
	if f.Remaining() != 1 {
		t.Error("a cancelled call consumed a script item")
	}
}

func TestFakeConcurrentUse(t *testing.T) {
	const n = 200
	script := make([]demiurge.ModelResponse, n)
	for i := range script {
		script[i] = demiurge.ModelResponse{Content: "item-" + strconv.Itoa(i)}
	}
	f := NewFake(script)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n/8 + 5 {
				cb := func(string) {}
				if g%2 == 0 {
					cb = nil
				}
				resp, err := f.Complete(context.Background(), demiurge.ModelRequest{Messages: msgs("user", "u")}, cb)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[resp.Content]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, item := range script {
		if seen[item.Content] != 1 {
			t.Errorf("%q delivered %d times, want once", item.Content, seen[item.Content])
		}
	}
	if got, want := seen["[fake] u"], 8*(n/8+5)-n; got != want {
		t.Errorf("rule answers = %d, want %d", got, want)
	}
}
