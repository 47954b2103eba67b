package builtin

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/effect"
)

// Output limits shared by the tools (spec tool-runtime conventions).
const (
	defaultReadLimitChars  = 20000
	defaultToolOutputChars = 12000
)

// positive is the spec's positive_int over a decoded argument: def when
// it is ≤ 0 (absent), capped at max.
func positive(n, def, max int64) int64 {
	if n <= 0 {
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
