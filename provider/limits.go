package provider

import (
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/tokens"
)

// family is the limits of the models whose names start with prefix.
type family struct {
	prefix string
	limits demiurge.ModelLimits
}

// families are the builtin limits per model family, most specific prefix
// first. Names are matched lower-cased, after any "vendor/" prefix (the
// OpenRouter spelling). Output limits are what the vendor accepts as
// max_tokens for the family; windows are the documented context sizes.
var families = []family{
	{"gpt-5", demiurge.ModelLimits{ContextWindow: 400_000, MaxOutputTokens: 128_000, Tokenizer: tokens.O200k}},
	{"gpt-4.1", demiurge.ModelLimits{ContextWindow: 1_047_576, MaxOutputTokens: 32_768, Tokenizer: tokens.O200k}},
	{"gpt-4o", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 16_384, Tokenizer: tokens.O200k}},
	{"chatgpt-4o", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 16_384, Tokenizer: tokens.O200k}},
	{"o1", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 100_000, Tokenizer: tokens.O200k}},
	{"o3", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 100_000, Tokenizer: tokens.O200k}},
	{"o4", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 100_000, Tokenizer: tokens.O200k}},
	{"gpt-4-turbo", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 4_096, Tokenizer: tokens.Cl100k}},
	{"gpt-4", demiurge.ModelLimits{ContextWindow: 8_192, MaxOutputTokens: 4_096, Tokenizer: tokens.Cl100k}},
	{"gpt-3.5", demiurge.ModelLimits{ContextWindow: 16_385, MaxOutputTokens: 4_096, Tokenizer: tokens.Cl100k}},
	{"claude-opus-4", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 32_000}},
	{"claude-sonnet-4", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 64_000}},
	{"claude-haiku-4", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 64_000}},
	{"claude-3-7", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 64_000}},
	{"claude-3-5", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 8_192}},
	{"claude", demiurge.ModelLimits{ContextWindow: 200_000, MaxOutputTokens: 4_096}},
	{"deepseek-reasoner", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 32_768}},
	{"deepseek", demiurge.ModelLimits{ContextWindow: 128_000, MaxOutputTokens: 8_192}},
	{"kimi", demiurge.ModelLimits{ContextWindow: 131_072, MaxOutputTokens: 16_384}},
	{"moonshot", demiurge.ModelLimits{ContextWindow: 131_072, MaxOutputTokens: 16_384}},
	{"minimax", demiurge.ModelLimits{ContextWindow: 204_800, MaxOutputTokens: 32_768}},
	{"qwen", demiurge.ModelLimits{ContextWindow: 131_072, MaxOutputTokens: 8_192}},
	{"glm", demiurge.ModelLimits{ContextWindow: 131_072, MaxOutputTokens: 16_384}},
	{"fake", demiurge.ModelLimits{ContextWindow: 131_072, MaxOutputTokens: 4_096}},
}

// unknownFamily is the limits of a model no family matches: small enough
// for any current model, so an unknown model is never sent too much.
var unknownFamily = demiurge.ModelLimits{ContextWindow: 32_768, MaxOutputTokens: 4_096}

// FamilyLimits returns the builtin limits of model's family.
func FamilyLimits(model string) demiurge.ModelLimits {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, f := range families {
		if strings.HasPrefix(m, f.prefix) {
			return f.limits
		}
	}
	return unknownFamily
}

// limitsOf is the family's limits with a custom profile's overrides.
func limitsOf(model string, custom *CustomProfile) demiurge.ModelLimits {
	l := FamilyLimits(model)
	if custom != nil {
		if custom.ContextWindow > 0 {
			l.ContextWindow = custom.ContextWindow
		}
		if custom.MaxOutputTokens > 0 {
			l.MaxOutputTokens = custom.MaxOutputTokens
		}
		if custom.Tokenizer != "" {
			l.Tokenizer = custom.Tokenizer
		}
	}
	if l.Tokenizer == tokens.Estimate {
		l.Tokenizer = ""
	}
	return l
}
