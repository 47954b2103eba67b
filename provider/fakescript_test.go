package provider

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
)

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadFakeScript(t *testing.T) {
	want := []demiurge.ModelResponse{
		{Content: "hello"},
		{ToolCalls: []demiurge.ToolCall{
			{ID: "fake_tool_call_1", Name: "read", Arguments: map[string]any{"path": "a", "n": 1.0}},
			{ID: "mine", Name: "write", Arguments: map[string]any{}},
			{ID: "fake_tool_call_3", Name: "tools_list", Arguments: map[string]any{}},
		}},
		{Content: "both", ToolCalls: []demiurge.ToolCall{{ID: "fake_tool_call_1", Name: "x", Arguments: map[string]any{}}}},
		{},
	}
	items := `[
		{"content": "hello"},
		{"tool_calls": [
			{"name": "read", "arguments": {"path": "a", "n": 1}},
			{"id": "mine", "name": "write", "arguments": null},
			{"id": null, "name": "tools_list"}]},
		{"content": "both", "tool_calls": [{"name": "x"}]},
		{"content": null, "tool_calls": null}
	]`
	for _, body := range []string{items, "\n  " + items + "\n", `{"responses": ` + items + `}`} {
		got, err := LoadFakeScript(writeScript(t, body))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("script = %#v\nwant %#v", got, want)
		}
	}
	got, err := LoadFakeScript(writeScript(t, `{"responses": []}`))
	if err != nil || len(got) != 0 {
		t.Errorf("empty script = %v, %v", got, err)
	}
}

func TestLoadFakeScriptErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"empty file", " \n", ": empty file"},
		{"syntax error with position", "[\n  {\"content\": \"a\",}\n]", ": line 2, column 19: invalid character '}'"},
		{"trailing data", `[] []`, ": line 1, column 4: invalid character '[' after top-level value"},
		{"scalar", `"hello"`, `: want a JSON list or {"responses": [...]}`},
		{"unknown top-level key", `{"responses": [], "extra": 1}`, `: unknown top-level key(s) "extra"`},
		{"missing responses", `{}`, `: missing "responses"`},
		{"responses not a list", `{"responses": {}}`, `: "responses" must be a JSON list`},
		{"item not an object", `[{"content":"a"}, 3]`, `: responses[1]: want an object`},
		{"unknown item key", `[{"content":"a"}, {"text":"b", "zeta": 1}]`, `: responses[1]: unknown key(s) "text", "zeta" (allowed: content, tool_calls, usage)`},
		{"content not a string", `[{"content": 5}]`, `: responses[0].content: want a string`},
		{"usage not an object", `[{"usage": 5}]`, `: responses[0].usage: want an object`},
		{"unknown usage key", `[{"usage": {"tokens": 5}}]`, `: responses[0].usage: unknown key(s) "tokens" (allowed: input_tokens, output_tokens)`},
		{"negative usage", `[{"usage": {"output_tokens": -1}}]`, `: responses[0].usage.output_tokens: want a non-negative integer`},
		{"tool_calls not a list", `[{"tool_calls": {"name": "x"}}]`, `: responses[0].tool_calls: want a list`},
		{"unknown call key", `[{"tool_calls": [{"name": "x", "args": {}}]}]`, `: responses[0].tool_calls[0]: unknown key(s) "args" (allowed: id, name, arguments)`},
		{"missing name", `[{}, {"tool_calls": [{"name": "x"}, {"id": "y"}]}]`, `: responses[1].tool_calls[1].name: required`},
		{"empty name", `[{"tool_calls": [{"name": " "}]}]`, `: responses[0].tool_calls[0].name: must not be empty`},
		{"name not a string", `[{"tool_calls": [{"name": 1}]}]`, `: responses[0].tool_calls[0].name: want a string`},
		{"id not a string", `[{"tool_calls": [{"name": "x", "id": 2}]}]`, `: responses[0].tool_calls[0].id: want a string`},
		{"arguments not an object", `[{"tool_calls": [{"name": "x", "arguments": "{}"}]}]`, `: responses[0].tool_calls[0].arguments: want an object`},
		{"arguments a list", `[{"tool_calls": [{"name": "x", "arguments": []}]}]`, `: responses[0].tool_calls[0].arguments: want an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, tt.body)
			_, err := LoadFakeScript(path)
			checkErr(t, err, demiurge.ECONFIG, "fake script "+path+tt.want)
		})
	}
	missing := filepath.Join(t.TempDir(), "nope.json")
	_, err := LoadFakeScript(missing)
	checkErr(t, err, demiurge.ECONFIG, "fake script "+missing+": file not found")
}
