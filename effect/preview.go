package effect

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/redact"
)

// Bounds of an approval argument preview.
const (
	DefaultPreviewChars = 2048 // whole preview, in bytes of json.Marshal output

	previewDepth     = 4
	previewItems     = 20
	previewString    = 256
	previewKey       = 80
	redactedMarker   = "<redacted>"
	truncatedMarker  = "<truncated>"
	truncatedFlagKey = "_truncated"
	truncatedItemKey = "_truncated_items"
)

// sensitiveKeyParts are the substrings that make an argument name sensitive
// in an approval preview, in addition to redact.SensitiveField.
// The substring rule is broader ("password_hint", "secret_name"); over-
// redacting a preview costs nothing, leaking one costs a credential.
var sensitiveKeyParts = []string{
	"api_key", "apikey", "authorization", "cookie", "credential",
	"password", "passwd", "private_key", "secret", "token",
}

// Preview returns a bounded, redacted copy of tool arguments for an approval
// request. Raw arguments go only to the adapter; the operator sees this.
//
//   - A value under a sensitive argument name (redact.SensitiveField, or a
//     name containing api_key, token, secret, password, ...) is replaced by
//     "<redacted>" whatever its type, so a secret nested in a container under
//     such a name is never copied.
//   - Values under cmd/command/shell_command have --token=x, token=x and
//     Authorization: headers redacted; summary/target/url values have
//     name=value assignments redacted.
//   - Strings longer than 256 characters end in "...[truncated N chars]";
//     names are cut to 80 characters; containers deeper than 4 levels become
//     "<truncated>"; at most 20 items per container are kept (a map records
//     the rest as "_truncated_items": N, a list as "<truncated N items>").
//   - If json.Marshal of the result is longer than maxChars bytes (≤ 0
//     means DefaultPreviewChars), the largest top-level values become "<truncated>"
//     and then top-level keys are dropped from the end (sorted order) until
//     it fits; "_truncated": true marks that.
//
// Map keys are visited in sorted order, so a preview is deterministic. Values
// of types other than JSON's are converted through their JSON encoding (a
// demiurge.Secret encodes redacted); one that cannot be encoded becomes
// "<unserializable>".
func Preview(args map[string]any, maxChars int) map[string]any {
	if maxChars <= 0 {
		maxChars = DefaultPreviewChars
	}
	return fitPreview(previewWalker{bound: true}.mapv(args, 1), maxChars)
}

// sanitizePreview re-applies the name-based redaction, the depth bound and
// the DefaultPreviewChars size bound to a preview the runtime was handed,
// without re-truncating strings or lists: on a Preview result it changes
// nothing, and on raw arguments passed by mistake it still hides every
// value under a sensitive name and bounds the whole.
func sanitizePreview(p map[string]any) map[string]any {
	return fitPreview(previewWalker{}.mapv(p, 1), DefaultPreviewChars)
}

// SensitiveArgument reports whether an argument name must be redacted in an
// approval preview.
func SensitiveArgument(name string) bool {
	if redact.SensitiveField(name) {
		return true
	}
	n := normalizeArgName(name)
	for _, part := range sensitiveKeyParts {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

func normalizeArgName(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
}

// previewWalker copies a value tree with redaction. bound additionally cuts
// strings, names and containers to the preview limits.
type previewWalker struct{ bound bool }

func (w previewWalker) mapv(m map[string]any, depth int) map[string]any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, len(keys))
	for i, k := range keys {
		if w.bound && i == previewItems {
			out[truncatedItemKey] = len(keys) - previewItems
			break
		}
		name := k
		if w.bound {
			name = truncateKey(k)
		}
		out[name] = w.field(k, m[k], depth)
	}
	return out
}

func (w previewWalker) field(key string, v any, depth int) any {
	if SensitiveArgument(key) {
		return redactedMarker
	}
	if s, ok := v.(string); ok {
		switch normalizeArgName(key) {
		case "cmd", "command", "shell_command":
			return w.text(RedactCommand(s))
		case "summary", "target", "url":
			return w.text(RedactText(s))
		}
	}
	return w.value(v, depth)
}

func (w previewWalker) text(s string) string {
	if w.bound {
		return TruncateText(s, previewString)
	}
	return s
}

func (w previewWalker) value(v any, depth int) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) { // not representable in JSON
			return fmt.Sprint(x)
		}
		return x
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return x
	case string:
		return w.text(x)
	case map[string]any:
		if depth >= previewDepth {
			return truncatedMarker
		}
		return w.mapv(x, depth+1)
	case []any:
		if depth >= previewDepth {
			return truncatedMarker
		}
		items := x
		if w.bound && len(items) > previewItems {
			items = items[:previewItems]
		}
		out := make([]any, 0, len(items)+1)
		for _, item := range items {
			out = append(out, w.value(item, depth+1))
		}
		if len(items) < len(x) {
			out = append(out, fmt.Sprintf("<truncated %d items>", len(x)-len(items)))
		}
		return out
	default:
		// Other types (typed slices and maps, structs) go through their JSON
		// form, so their names are checked like any other argument's.
		raw, err := json.Marshal(x)
		if err != nil {
			return "<unserializable>"
		}
		var generic any
		if err := json.Unmarshal(raw, &generic); err != nil {
			return "<unserializable>"
		}
		return w.value(generic, depth)
	}
}

// fitPreview bounds the whole preview to maxChars of compact JSON.
func fitPreview(p map[string]any, maxChars int) map[string]any {
	if jsonLen(p) <= maxChars {
		return p
	}
	// First replace the largest values, which keeps every key visible.
	type sized struct {
		key  string
		size int
	}
	var order []sized
	for k, v := range p {
		if size := jsonLen(v); size > len(truncatedMarker)+2 {
			order = append(order, sized{k, size})
		}
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].size != order[j].size {
			return order[i].size > order[j].size
		}
		return order[i].key < order[j].key
	})
	for _, s := range order {
		p[s.key] = truncatedMarker
		if jsonLen(p) <= maxChars {
			return p
		}
	}
	// Then drop keys from the end until it fits with the marker.
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p[truncatedFlagKey] = true
	for i := len(keys) - 1; i >= 0 && jsonLen(p) > maxChars; i-- {
		if keys[i] != truncatedFlagKey {
			delete(p, keys[i])
		}
	}
	return p
}

// jsonLen is the length in bytes of v as compact JSON as json.Marshal
// writes it (with HTML escaping, the longer form, so the bound holds for
// every encoder).
func jsonLen(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt32 // unencodable: too long by definition, so it is cut
	}
	return len(raw)
}

// TruncateText returns s when it has at most limit characters, else its
// first limit characters followed by "...[truncated N chars]" (N omitted
// characters). It never splits a UTF-8 sequence.
func TruncateText(s string, limit int) string {
	limit = max(limit, 0)
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	cut, count := 0, 0
	for i := range s {
		if count == limit {
			cut = i
			break
		}
		count++
	}
	return fmt.Sprintf("%s...[truncated %d chars]", s[:cut], n-limit)
}

func truncateKey(k string) string {
	if utf8.RuneCountInString(k) <= previewKey {
		return k
	}
	return TruncateText(k, previewKey)
}

// RedactCommand removes credentials that a shell command carries next to
// their name (--token=x / --token x, token=x, Authorization: headers), with
// the redact package's discovery.
func RedactCommand(s string) string { return redactDiscovered(s) }

// RedactText removes name=value credentials (token=x, api_key=x) from free
// text such as an approval summary, target or URL.
func RedactText(s string) string { return redactDiscovered(s) }

// redactDiscovered replaces every secret redact.Discover finds in s with
// the model-view marker; a failure hides the whole text.
func redactDiscovered(s string) string {
	out, err := redact.RedactValue(s, redact.Model)
	if str, ok := out.(string); ok && err == nil {
		return str
	}
	return redact.RedactionFailed
}
