package provider

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestUsageOfBothSpellings(t *testing.T) {
	cases := []struct {
		name string
		raw  map[string]any
		want demiurge.Usage
	}{
		{"none", map[string]any{"id": "x"}, demiurge.Usage{}},
		{"anthropic with cache", map[string]any{"usage": map[string]any{
			"input_tokens": 10.0, "cache_read_input_tokens": 5.0, "cache_creation_input_tokens": 2.0, "output_tokens": 7.0}},
			demiurge.Usage{InputTokens: 17, OutputTokens: 7, CachedTokens: 5}},
		{"chat completions with cache", map[string]any{"usage": map[string]any{"prompt_tokens": 12.0, "completion_tokens": 3.0,
			"prompt_tokens_details": map[string]any{"cached_tokens": 8.0}}},
			demiurge.Usage{InputTokens: 12, OutputTokens: 3, CachedTokens: 8}},
		{"chat completions", map[string]any{"usage": map[string]any{"prompt_tokens": 12.0, "completion_tokens": 3.0, "total_tokens": 15.0}},
			demiurge.Usage{InputTokens: 12, OutputTokens: 3}},
		{"negative and malformed", map[string]any{"usage": map[string]any{"input_tokens": -4.0, "output_tokens": "many"}}, demiurge.Usage{}},
		{"not an object", map[string]any{"usage": 3.0}, demiurge.Usage{}},
	}
	for _, c := range cases {
		if got := usageOf(c.raw); got != c.want {
			t.Errorf("%s: usage %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestFakeScriptReportsUsage(t *testing.T) {
	path := writeScript(t, `[{"content": "a", "usage": {"input_tokens": 120, "output_tokens": 8}}, {"content": "b"}]`)
	script, err := LoadFakeScript(path)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFake(script)
	first, err := f.Complete(context.Background(), demiurge.ModelRequest{}, nil)
	if err != nil || first.Usage != (demiurge.Usage{InputTokens: 120, OutputTokens: 8}) {
		t.Fatalf("first: %+v %v", first.Usage, err)
	}
	second, _ := f.Complete(context.Background(), demiurge.ModelRequest{}, nil)
	if !second.Usage.IsZero() {
		t.Fatalf("an item without usage reports %+v", second.Usage)
	}
}
