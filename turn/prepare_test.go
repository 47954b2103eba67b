package turn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/tokens"
)

// histTurn is one persisted turn: a user message, an assistant step
// calling a tool, its result of size result, and an answer.
func histTurn(n, result int) []demiurge.Message {
	id := fmt.Sprintf("turn_%d", n)
	call := fmt.Sprintf("call_%d", n)
	m := func(role, text string, meta map[string]any) demiurge.Message {
		x := msg(role, text, meta)
		x.TurnID, x.ID = id, fmt.Sprintf("msg_%d_%s_%d", n, role, len(text))
		return x
	}
	return []demiurge.Message{
		m("user", fmt.Sprintf("question %d", n), nil),
		m("assistant", "", map[string]any{"tool_calls": []any{map[string]any{"id": call, "name": "read_file", "arguments": map[string]any{"path": "f"}}}}),
		m("tool", strings.Repeat("word ", result/5), map[string]any{"tool_call_id": call, "tool_name": "read_file"}),
		m("assistant", fmt.Sprintf("answer %d", n), nil),
	}
}

func testWindow(t *testing.T, window, out int) *window {
	t.Helper()
	w, err := newWindow(demiurge.ModelLimits{ContextWindow: window, MaxOutputTokens: out, Tokenizer: tokens.O200k}, core.ModelConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestBudgetReservesOutputAndMargin(t *testing.T) {
	cases := []struct {
		name                  string
		limits                demiurge.ModelLimits
		model                 core.ModelConfig
		reserve, budget, code int
	}{
		{"exact tokenizer", demiurge.ModelLimits{ContextWindow: 10000, MaxOutputTokens: 1000, Tokenizer: tokens.O200k}, core.ModelConfig{}, 1000, 10000 - 1000 - 364, 0},
		{"estimate keeps a wider margin", demiurge.ModelLimits{ContextWindow: 10000, MaxOutputTokens: 1000}, core.ModelConfig{}, 1000, 10000 - 1000 - 1064, 0},
		{"output limit at most half the window", demiurge.ModelLimits{ContextWindow: 10000, MaxOutputTokens: 9000, Tokenizer: tokens.O200k}, core.ModelConfig{}, 5000, 10000 - 5000 - 364, 0},
		{"core window and model_options override", demiurge.ModelLimits{ContextWindow: 128000, MaxOutputTokens: 16000, Tokenizer: tokens.O200k},
			core.ModelConfig{ContextWindow: 20000, ModelOptions: map[string]any{"max_tokens": 2000}}, 2000, 20000 - 2000 - 664, 0},
		{"window below the minimal context", demiurge.ModelLimits{ContextWindow: 500, MaxOutputTokens: 100}, core.ModelConfig{}, 0, 0, 1},
	}
	for _, c := range cases {
		w, err := newWindow(c.limits, c.model, nil)
		if c.code != 0 {
			if demiurge.ErrorCode(err) != demiurge.ECONFIG || !strings.Contains(err.Error(), "context_window") {
				t.Errorf("%s: err %v, want a config error naming context_window", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if w.reserve != c.reserve || w.budget() != c.budget {
			t.Errorf("%s: reserve %d budget %d, want %d %d", c.name, w.reserve, w.budget(), c.reserve, c.budget)
		}
	}
}

// Exchanges are never split, tool results are pruned oldest first before
// any exchange is dropped, and the oldest exchanges are dropped last.
func TestSelectHistoryPruningOrder(t *testing.T) {
	w := testWindow(t, 100000, 1000)
	var hist []demiurge.Message
	for n := 0; n < 6; n++ {
		hist = append(hist, histTurn(n, 2000)...)
	}
	exs := exchanges(hist, w.counter, &countCache{})
	if len(exs) != 6 {
		t.Fatalf("%d exchanges, want 6", len(exs))
	}
	total, pruned := 0, 0
	for _, e := range exs {
		total, pruned = total+e.full, pruned+e.pruned
		if len(e.msgs) != 4 || len(e.stubs) != 4 {
			t.Fatalf("exchange %s has %d messages, %d stubs", e.turnID, len(e.msgs), len(e.stubs))
		}
	}
	cases := []struct {
		name            string
		room            int
		pruned, dropped int
	}{
		{"everything fits", total, 0, 0},
		{"one pruned", total - 1, 1, 0},
		{"three pruned", total - 2*(exs[0].full-exs[0].pruned) - 1, 3, 0},
		{"all pruned", pruned, 6, 0},
		{"all pruned, two dropped", pruned - exs[0].pruned - 1, 4, 2},
		{"nothing fits", 1, 0, 6},
	}
	for _, c := range cases {
		sel := selectHistory(exs, c.room)
		if sel.pruned != c.pruned || sel.dropped != c.dropped || sel.tokens > c.room {
			t.Errorf("%s: pruned %d dropped %d tokens %d (room %d), want pruned %d dropped %d", c.name, sel.pruned, sel.dropped, sel.tokens, c.room, c.pruned, c.dropped)
		}
		// Never split: every tool message follows its call, and the
		// history starts with a user message.
		open := map[string]bool{}
		for i, m := range sel.msgs {
			if i == 0 && m.Role != "user" {
				t.Errorf("%s: history starts with %s", c.name, m.Role)
			}
			for _, tc := range m.ToolCalls {
				open[tc.ID] = true
			}
			if m.Role == "tool" && !open[m.ToolCallID] {
				t.Errorf("%s: tool result %s without its call", c.name, m.ToolCallID)
			}
		}
		// The pruned ones are the oldest, and they keep name, status, size.
		for i, m := range sel.msgs {
			if m.Role == "tool" && strings.HasPrefix(m.Content, "[tool result pruned") {
				if want := "[tool result pruned to save context: read_file, ok, 2000 chars]"; m.Content != want {
					t.Errorf("%s: stub %q, want %q", c.name, m.Content, want)
				}
				if i/4 >= sel.pruned {
					t.Errorf("%s: message %d pruned though only the %d oldest exchanges should be", c.name, i, sel.pruned)
				}
			}
		}
	}
}

// prepare never builds a request over the budget, keeps the user message
// verbatim, and fails with context_overflow, saying by how much, when the
// minimal context does not fit (CTX-01).
func TestPrepareBoundsTheRequest(t *testing.T) {
	w := testWindow(t, 4096, 512)
	var hist []demiurge.Message
	for n := 0; n < 120; n++ {
		hist = append(hist, histTurn(n, 1500)...)
	}
	l := contextLayers{soul: "SOUL", history: hist, summary: "[summary]"}
	f := newFitted(w, l, nil, &countCache{})
	if !f.wantsCompaction("current-input-sentinel") {
		t.Fatal("a history far over the budget does not ask for compaction")
	}
	p, err := f.prepare("current-input-sentinel", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.estimate > w.budget() {
		t.Fatalf("estimate %d over budget %d", p.estimate, w.budget())
	}
	if got := p.msgs[len(p.msgs)-1]; got.Role != "user" || got.Content != "current-input-sentinel" {
		t.Fatalf("last message %+v", got)
	}
	if !strings.Contains(p.msgs[0].Content, "[summary]") || p.sel.dropped == 0 || p.sel.pruned == 0 {
		t.Fatalf("system %q, pruned %d dropped %d", p.msgs[0].Content, p.sel.pruned, p.sel.dropped)
	}
	// A count of the whole request agrees with the estimate's bound.
	n := tokens.PerRequest
	for _, m := range p.msgs {
		n += countMessage(w.counter, m)
	}
	if n > w.budget() {
		t.Fatalf("recounted request %d tokens over budget %d", n, w.budget())
	}

	huge := contextLayers{soul: strings.Repeat("soul text ", 3000)}
	_, err = newFitted(w, huge, nil, &countCache{}).prepare("hi", nil)
	if demiurge.ErrorCode(err) != demiurge.ECONTEXTOVERFLOW || !strings.Contains(err.Error(), "over by ") {
		t.Fatalf("err %v, want context_overflow saying by how much", err)
	}
}

func coreModel() core.ModelConfig { return core.ModelConfig{} }
