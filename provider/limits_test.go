package provider

import (
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/tokens"
)

func TestFamilyLimits(t *testing.T) {
	cases := []struct {
		model string
		want  demiurge.ModelLimits
	}{
		{"gpt-4o-mini", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 16_384, Tokenizer: tokens.O200k}},
		{"openai/gpt-4o-mini", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 16_384, Tokenizer: tokens.O200k}},
		{"GPT-4.1-nano", demiurge.ModelLimits{ContextWindow: 1_047_576, MaxOutputTokens: 32_768, Tokenizer: tokens.O200k}},
		{"gpt-4", demiurge.ModelLimits{ContextWindow: 8_192, MaxOutputTokens: 4_096, Tokenizer: tokens.Cl100k}},
		{"claude-sonnet-4-5", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 64_000}},
		{"deepseek-chat", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 8_192}},
		{"llama-3-local", unknownFamily},
	}
	for _, c := range cases {
		if got := FamilyLimits(c.model); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.model, got, c.want)
		}
	}
}

func TestResolvedLimits(t *testing.T) {
	cfg := Config{Custom: map[string]CustomProfile{
		"local": {APIMode: ModeOpenAIChat, BaseURL: "http://127.0.0.1:8080/v1", APIKey: "k", ContextWindow: 8192, MaxOutputTokens: 1024, Tokenizer: tokens.O200k},
	}}
	_, res, err := Resolve(ResolveInput{Flag: "local", Model: "llama", Config: cfg, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if want := (demiurge.ModelLimits{ContextWindow: 8192, MaxOutputTokens: 1024, Tokenizer: tokens.O200k}); res.Limits != want {
		t.Fatalf("custom limits %+v, want %+v", res.Limits, want)
	}
	for _, bad := range []CustomProfile{
		{APIMode: ModeOpenAIChat, BaseURL: "http://h/v1", ContextWindow: -1},
		{APIMode: ModeOpenAIChat, BaseURL: "http://h/v1", ContextWindow: 100},
		{APIMode: ModeOpenAIChat, BaseURL: "http://h/v1", ContextWindow: 4096, MaxOutputTokens: 4096},
		{APIMode: ModeOpenAIChat, BaseURL: "http://h/v1", Tokenizer: "words"},
	} {
		err := Config{Custom: map[string]CustomProfile{"local": bad}}.Validate()
		if demiurge.ErrorCode(err) != demiurge.ECONFIG {
			t.Errorf("%+v: err %v, want a config error naming the key", bad, err)
		}
	}
}
