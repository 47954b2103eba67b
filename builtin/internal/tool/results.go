package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/effect"
)

// Output limits shared by the tools (spec tool-runtime conventions).
const (
	ReadLimitChars = 20000
	OutputChars    = 12000
)

// Positive is the spec's positive_int over a decoded argument: def when
// it is ≤ 0 (absent), capped at max.
func Positive(n, def, max int64) int64 {
	if n <= 0 {
		n = def
	}
	return min(n, max)
}

// TruncateText is the spec's truncate_text: s unchanged when it has at most
// limit characters, else its first limit characters and a note of how many
// were left out.
func TruncateText(s string, limit int) string {
	limit = max(limit, 0)
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	return fmt.Sprintf("%s\n...[truncated %d chars]", FirstChars(s, limit), n-limit)
}

// FirstChars returns the first n characters of s.
func FirstChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Invalid is the outcome of a request the tool refuses before doing
// anything: bad arguments, a missing file.
func Invalid(format string, args ...any) effect.Outcome {
	return effect.Outcome{IsError: true, Content: fmt.Sprintf(format, args...)}
}

// InvalidData is invalid with result data.
func InvalidData(data map[string]any, format string, args ...any) effect.Outcome {
	out := Invalid(format, args...)
	out.Data = data
	return out
}

// Denied is the outcome of a request a Host policy refuses (workspace
// scope, sensitive paths, protected names): nothing is read or written.
func Denied(reason, format string, args ...any) effect.Outcome {
	return effect.Outcome{
		IsError: true, Denial: "policy",
		Content: fmt.Sprintf(format, args...),
		Data:    map[string]any{"reason": reason},
	}
}

// Unavailable is the outcome of a tool whose Host dependency is missing.
func Unavailable(tool, what string) effect.Outcome {
	return Invalid("%s is not available: %s", tool, what)
}

// Succeeded is a successful outcome.
func Succeeded(content string, data map[string]any) effect.Outcome {
	return effect.Outcome{Content: content, Data: data, ExecutionStarted: true}
}

// JSONText renders v as compact JSON without HTML escaping.
func JSONText(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func ObjectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return s
}

// IOReason is the part of an I/O error worth showing: the system's reason
// without the absolute path it was about.
func IOReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}
