package effect

import (
	"encoding/json"
	"testing"
)

// FuzzValidateArgs feeds arbitrary JSON arguments to a builtin-shaped
// schema: validation never panics, and a call it accepts really matches the
// schema's required string field.
func FuzzValidateArgs(f *testing.F) {
	schema := map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"path"},
		"properties": map[string]any{
			"path":  map[string]any{"type": "string", "maxLength": 64},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 4},
		},
	}
	raw, _ := json.Marshal(schema)
	v, err := compileSchema(raw)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"path":"a"}`, `{"path":3}`, `{}`, `{"path":"a","limit":0}`, `{"path":"a","x":1}`, `{"path":"a","tags":["a","b","c","d","e"]}`, `{"path":"a","limit":1.5}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var args map[string]any
		if json.Unmarshal([]byte(doc), &args) != nil || args == nil {
			return
		}
		msg := validateArgs(v, args)
		if msg == "" {
			if _, ok := args["path"].(string); !ok {
				t.Fatalf("accepted arguments without a string path: %s", doc)
			}
		}
	})
}
