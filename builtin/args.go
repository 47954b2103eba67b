package builtin

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/effect"
)

// Output limits shared by the tools (spec tool-runtime conventions).
const (
	defaultReadLimitChars  = 20000
	defaultToolOutputChars = 12000
)

// The dispatcher validates arguments against each tool's schema before the
// adapter runs; the helpers below still coerce defensively, the way the
// original handlers do, so an adapter invoked directly never panics on an
// unexpected type.

// stringArg returns args[key] as a string; missing or null is "".
func stringArg(args map[string]any, key string) string {
	switch v := args[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// optionalString returns args[key] as a string and whether it was given
// (not missing and not null).
func optionalString(args map[string]any, key string) (string, bool) {
	if v, ok := args[key]; !ok || v == nil {
		return "", false
	}
	return stringArg(args, key), true
}

// boolArg returns args[key] as a bool, def when missing or not a bool.
func boolArg(args map[string]any, key string, def bool) bool {
	if b, ok := args[key].(bool); ok {
		return b
	}
	return def
}

// intArg returns args[key] as an integer (fractions truncated toward zero,
// numeric strings parsed), def when missing or not a number.
func intArg(args map[string]any, key string, def int64) int64 {
	if n, ok := toInt(args[key]); ok {
		return n
	}
	return def
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		if n > math.MaxInt64/2 {
			return math.MaxInt64 / 2, true
		}
		if n < math.MinInt64/2 {
			return math.MinInt64 / 2, true
		}
		return int64(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil {
			return toInt(f)
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}

// positiveInt is the spec's positive_int: parse, fall back to def when
// missing or ≤ 0, then cap at max.
func positiveInt(args map[string]any, key string, def, max int64) int64 {
	n, ok := toInt(args[key])
	if !ok || n <= 0 {
		n = def
	}
	return min(n, max)
}

// truncateText is the spec's truncate_text: s unchanged when it has at most
// limit characters, else its first limit characters and a note of how many
// were left out.
func truncateText(s string, limit int) string {
	limit = max(limit, 0)
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	return fmt.Sprintf("%s\n...[truncated %d chars]", firstChars(s, limit), n-limit)
}

// firstChars returns the first n characters of s.
func firstChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// checkedAdapter is an adapter whose tool names its own argument errors:
// check returns "" or the sentence the model sees. The adapter calls check
// checks (at least) the same itself; the dispatcher asks check too (effect.ArgumentMessenger) when the
// schema refuses the arguments, so both paths say the same.
type checkedAdapter struct {
	effect.AdapterFunc
	check func(args map[string]any) string
}

var _ effect.ArgumentMessenger = checkedAdapter{}

// ArgumentError is the tool's sentence for arguments the schema refused.
func (a checkedAdapter) ArgumentError(args map[string]any, _ string) string { return a.check(args) }

// invalid is the outcome of a request the tool refuses before doing
// anything: bad arguments, a missing file.
func invalid(format string, args ...any) effect.Outcome {
	return effect.Outcome{IsError: true, Content: fmt.Sprintf(format, args...)}
}

// invalidData is invalid with result data.
func invalidData(data map[string]any, format string, args ...any) effect.Outcome {
	out := invalid(format, args...)
	out.Data = data
	return out
}

// denied is the outcome of a request a Host policy refuses (workspace
// scope, sensitive paths, protected names): nothing is read or written.
func denied(reason, format string, args ...any) effect.Outcome {
	return effect.Outcome{
		IsError: true, Denial: "policy",
		Content: fmt.Sprintf(format, args...),
		Data:    map[string]any{"reason": reason},
	}
}

// unavailable is the outcome of a tool whose Host dependency is missing.
func unavailable(tool, what string) effect.Outcome {
	return invalid("%s is not available: %s", tool, what)
}

// succeeded is a successful outcome.
func succeeded(content string, data map[string]any) effect.Outcome {
	return effect.Outcome{Content: content, Data: data, ExecutionStarted: true}
}

// jsonText renders v as compact JSON without HTML escaping.
func jsonText(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
