package turn

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

func msg(role, text string, meta map[string]any) demiurge.Message {
	return demiurge.Message{Role: role, Content: demiurge.MessageContent{Text: text, Kind: "message", ModelVisible: true, Metadata: meta}}
}

func TestAssembleOrderAndSystemMerge(t *testing.T) {
	l := contextLayers{
		soul: "SOUL", skills: "SKILLS", bootstrap: "BOOT", system: "SYS",
		contributions: []demiurge.Contribution{
			{Placement: demiurge.PlacementPreHistory, Role: demiurge.RoleUser, Text: "pre-history"},
			{Placement: demiurge.PlacementPreCurrentUser, Role: demiurge.RoleUser, Text: "pre-user"},
			{Placement: demiurge.PlacementPostCurrentUser, Role: demiurge.RoleUser, Text: "post-user"},
			{Placement: demiurge.PlacementPreCurrentUser, Role: demiurge.RoleSystem, Text: "late system"},
		},
		history: []demiurge.Message{msg("user", "old q", nil), msg("assistant", "old a", nil)},
	}
	got, stable := assemble(l, replay(l.history), "now", []demiurge.ModelMessage{{Role: "assistant", Content: "thinking"}})
	if stable != 4 { // system, pre-history, old q, old a
		t.Errorf("stable prefix %d messages, want 4", stable)
	}
	var seq []string
	for _, m := range got {
		seq = append(seq, m.Role+":"+m.Content)
	}
	want := "system:SOUL\nSKILLS\nBOOT\nSYS\nlate system|user:pre-history|user:old q|assistant:old a|user:pre-user|user:now|user:post-user|assistant:thinking"
	if s := strings.Join(seq, "|"); s != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
}

func TestReplayDropsOrphanToolMessagesAndRestoresCalls(t *testing.T) {
	hist := []demiurge.Message{
		msg("tool", "orphan result", map[string]any{"tool_call_id": "old", "tool_name": "x"}),
		msg("user", "q", nil),
		msg("assistant", "", map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "tools_list", "arguments": map[string]any{}}}}),
		msg("tool", "result", map[string]any{"tool_call_id": "c1", "tool_name": "tools_list"}),
		msg("assistant", "  ", nil),
		msg("assistant", "answer", nil),
	}
	got := replay(hist)
	if len(got) != 4 {
		t.Fatalf("got %d messages: %+v", len(got), got)
	}
	if got[1].Role != "assistant" || len(got[1].ToolCalls) != 1 || got[1].ToolCalls[0].ID != "c1" {
		t.Fatalf("assistant tool calls not restored: %+v", got[1])
	}
	if got[2].ToolCallID != "c1" || got[2].Name != "tools_list" {
		t.Fatalf("tool message %+v", got[2])
	}
}

func TestSanitizeErrorScrubsAndBounds(t *testing.T) {
	key := "sk-live-abcdef123456"
	err := demiurge.Errorf(demiurge.EUNAVAILABLE, "openai: HTTP 500:\n boom %s %s", key, strings.Repeat("x", 600))
	got := sanitizeError(err, []string{key})
	if strings.Contains(got.Message, key) || !strings.Contains(got.Message, "<redacted:API_KEY>") {
		t.Fatalf("key not scrubbed: %q", got.Message)
	}
	if strings.Contains(got.Message, "\n") || len([]rune(got.Message)) > maxErrorChars+len("... [truncated]") {
		t.Fatalf("not bounded to one line: %q", got.Message)
	}
	if got.Code != demiurge.EUNAVAILABLE {
		t.Fatalf("code %q", got.Code)
	}
}

func TestTruncateForModel(t *testing.T) {
	s := strings.Repeat("é", maxToolResultChars+10)
	got := truncateForModel(s)
	if !strings.HasSuffix(got, "\n...[truncated 10 chars]") || !strings.HasPrefix(got, strings.Repeat("é", maxToolResultChars)) {
		t.Fatalf("truncation wrong: ...%q", got[len(got)-40:])
	}
	if truncateForModel("short") != "short" {
		t.Fatal("short text changed")
	}
}
