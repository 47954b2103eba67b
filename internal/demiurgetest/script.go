package demiurgetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge"
)

// Reply is a scripted model answer with text and no tool call.
func Reply(text string) demiurge.ModelResponse { return demiurge.ModelResponse{Content: text} }

// Call is a scripted model answer that calls one tool.
func Call(name string, args map[string]any) demiurge.ModelResponse {
	return demiurge.ModelResponse{ToolCalls: []demiurge.ToolCall{{Name: name, Arguments: args}}}
}

// scriptItem is one response of a fake provider script (--fake-script).
type scriptItem struct {
	Content   string          `json:"content,omitempty"`
	ToolCalls []scriptCall    `json:"tool_calls,omitempty"`
	Usage     *demiurge.Usage `json:"usage,omitempty"`
}

type scriptCall struct {
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Script writes the fake provider script of responses to a file of a
// temporary directory and returns its path, for --fake-script and
// host.Options.FakeScript: the Host's fake provider answers with them in
// order, then by its rules.
func Script(tb testing.TB, responses ...demiurge.ModelResponse) string {
	tb.Helper()
	items := make([]scriptItem, 0, len(responses))
	for _, r := range responses {
		it := scriptItem{Content: r.Content}
		if !r.Usage.IsZero() {
			it.Usage = &r.Usage
		}
		for _, c := range r.ToolCalls {
			it.ToolCalls = append(it.ToolCalls, scriptCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		items = append(items, it)
	}
	b, err := json.Marshal(items)
	if err != nil {
		tb.Fatalf("fake script: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
