package provider

import (
	"encoding/json"

	"github.com/demiurge/demiurge"
)

// usageOf reads the token counts of a response's "usage" object in either
// API's spelling: input_tokens/output_tokens (Anthropic, OpenAI
// Responses), prompt_tokens/completion_tokens (OpenAI Chat Completions).
// Anthropic's cache reads and writes are input too; CachedTokens are the
// cache reads (Anthropic cache_read_input_tokens, OpenAI
// prompt_tokens_details.cached_tokens). Absent or malformed
// counts read as zero.
func usageOf(raw map[string]any) demiurge.Usage {
	u, _ := raw["usage"].(map[string]any)
	if u == nil {
		return demiurge.Usage{}
	}
	in := count(u["input_tokens"]) + count(u["cache_creation_input_tokens"]) + count(u["cache_read_input_tokens"])
	if in == 0 {
		in = count(u["prompt_tokens"])
	}
	out := count(u["output_tokens"])
	if out == 0 {
		out = count(u["completion_tokens"])
	}
	cached := count(u["cache_read_input_tokens"])
	if d, ok := u["prompt_tokens_details"].(map[string]any); ok && cached == 0 {
		cached = count(d["cached_tokens"])
	}
	return demiurge.Usage{InputTokens: in, OutputTokens: out, CachedTokens: cached}
}

func count(v any) int64 {
	switch n := v.(type) {
	case float64:
		if n > 0 {
			return int64(n)
		}
	case int:
		return int64(max(n, 0))
	case int64:
		return max(n, 0)
	case json.Number:
		if i, err := n.Int64(); err == nil && i > 0 {
			return i
		}
	}
	return 0
}
