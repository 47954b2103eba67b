package provider

import (
	"encoding/json"
	"strconv"
	"strings"
)

// decodeArguments parses tool-call arguments sent as a JSON string. Empty
// means no arguments; anything that is not a JSON object is kept verbatim as
// {"_raw": s}, so that the tool layer can report it to the model instead of
// the turn failing.
func decodeArguments(s string) map[string]any {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return map[string]any{"_raw": s}
	}
	return m
}

// objectInput is decodeArguments for arguments sent as a JSON value
// (Anthropic's tool_use input): a non-object value v becomes {"_raw": v}.
func objectInput(raw json.RawMessage) map[string]any {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return map[string]any{"_raw": string(raw)}
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"_raw": v}
}

// arguments returns a call's arguments as a JSON object, never null.
func arguments(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// metadataInt reads a positive integer from request metadata, accepting the
// numeric types JSON decoding and Go callers produce.
func metadataInt(md map[string]any, keys ...string) int {
	for _, k := range keys {
		switch v := md[k].(type) {
		case int:
			if v > 0 {
				return v
			}
		case int64:
			if v > 0 && v < 1<<31 {
				return int(v)
			}
		case float64:
			if v > 0 && v < 1<<31 && v == float64(int(v)) {
				return int(v)
			}
		case json.Number:
			if n, err := strconv.Atoi(string(v)); err == nil && n > 0 {
				return n
			}
		case string:
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// cmpPositive returns the first positive value, or 0.
func cmpPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// cmpOr returns the first non-empty string.
func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
