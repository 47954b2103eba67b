package provider

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
)

// modelParams are agent.yaml model.model_options, checked for one
// protocol: body fields merged into every request, and the output limit.
type modelParams struct {
	body      map[string]any
	maxTokens int
}

// optionRule checks one option and returns the request fields it becomes.
type optionRule func(v any) (map[string]any, error)

// optionRules are the model options each protocol knows. Anything else is
// refused: an option the API would ignore or reject is a configuration
// error before the first turn, not a surprise after it.
func optionRules(mode string) map[string]optionRule {
	switch mode {
	case ModeOpenAIChat:
		return map[string]optionRule{
			"temperature":       numberIn("temperature", 0, 2),
			"top_p":             numberIn("top_p", 0, 1),
			"presence_penalty":  numberIn("presence_penalty", -2, 2),
			"frequency_penalty": numberIn("frequency_penalty", -2, 2),
			"seed":              intAtLeast("seed", math.MinInt32),
			"max_tokens":        intAtLeast("", 1),
			"reasoning_effort":  oneOf("reasoning_effort", "minimal", "low", "medium", "high"),
		}
	case ModeAnthropicMessages:
		return map[string]optionRule{
			"temperature": numberIn("temperature", 0, 1),
			"top_p":       numberIn("top_p", 0, 1),
			"top_k":       intAtLeast("top_k", 1),
			"max_tokens":  intAtLeast("", 1),
			// Extended thinking: {"thinking": {"type": "enabled",
			// "budget_tokens": n}}; the API wants at least 1024.
			"thinking_budget": func(v any) (map[string]any, error) {
				n, ok := intOf(v)
				if !ok || n < 1024 {
					return nil, fmt.Errorf("must be an integer of at least 1024, got %v", v)
				}
				return map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": n}}, nil
			},
		}
	}
	return nil
}

// ModelOptionNames returns the model options mode knows, sorted.
func ModelOptionNames(mode string) []string {
	return slices.Sorted(maps.Keys(optionRules(mode)))
}

// ValidateModelOptions checks opts for a profile of mode. The fake
// provider takes any option and ignores it. Errors are ECONFIG and name
// the option: "model.model_options.temperature: must be a number between
// 0 and 1 for anthropic-messages, got 1.5".
func ValidateModelOptions(mode string, opts map[string]any) error {
	_, err := modelParamsFor(mode, opts)
	return err
}

func modelParamsFor(mode string, opts map[string]any) (modelParams, error) {
	var p modelParams
	if mode == ModeFake || len(opts) == 0 {
		return p, nil
	}
	rules := optionRules(mode)
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		if v == nil {
			continue // an explicit null is unset
		}
		rule, ok := rules[k]
		if !ok {
			return p, demiurge.Errorf(demiurge.ECONFIG, "model.model_options.%s: not an option of %s (known: %s)", k, mode, strings.Join(ModelOptionNames(mode), ", "))
		}
		fields, err := rule(v)
		if err != nil {
			return p, demiurge.Errorf(demiurge.ECONFIG, "model.model_options.%s: %v for %s", k, err, mode)
		}
		if k == "max_tokens" {
			p.maxTokens, _ = intOf(v)
			continue
		}
		if p.body == nil {
			p.body = map[string]any{}
		}
		maps.Copy(p.body, fields)
	}
	return p, nil
}

// mergeOptions is fallback's options with core's over them.
func mergeOptions(fallback, core map[string]any) map[string]any {
	if len(fallback) == 0 {
		return core
	}
	out := maps.Clone(fallback)
	maps.Copy(out, core)
	return out
}

// withBody composes a profile's extra body with the model options' fields
// (the options win).
func withBody(extra func(string) map[string]any, body map[string]any) func(string) map[string]any {
	if len(body) == 0 {
		return extra
	}
	return func(model string) map[string]any {
		out := map[string]any{}
		if extra != nil {
			maps.Copy(out, extra(model))
		}
		maps.Copy(out, body)
		return out
	}
}

func numberIn(field string, lo, hi float64) optionRule {
	return func(v any) (map[string]any, error) {
		f, ok := floatOf(v)
		if !ok || f < lo || f > hi {
			return nil, fmt.Errorf("must be a number between %g and %g, got %v", lo, hi, v)
		}
		return map[string]any{field: f}, nil
	}
}

func intAtLeast(field string, lo int) optionRule {
	return func(v any) (map[string]any, error) {
		n, ok := intOf(v)
		if !ok || n < lo {
			return nil, fmt.Errorf("must be an integer of at least %d, got %v", lo, v)
		}
		if field == "" {
			return nil, nil
		}
		return map[string]any{field: n}, nil
	}
}

func oneOf(field string, words ...string) optionRule {
	return func(v any) (map[string]any, error) {
		s, ok := v.(string)
		if !ok || !slices.Contains(words, s) {
			return nil, fmt.Errorf("must be one of %s, got %v", strings.Join(words, ", "), v)
		}
		return map[string]any{field: s}, nil
	}
}

// floatOf reads a YAML or JSON number.
func floatOf(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint32:
		return float64(n), true
	}
	return 0, false
}

// intOf reads a whole YAML or JSON number that fits an int32.
func intOf(v any) (int, bool) {
	f, ok := floatOf(v)
	if !ok || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, false
	}
	return int(f), true
}
