package redact

import (
	"strings"
	"testing"
)

// smallResult is a typical tool result: a short text, a few data fields.
func smallResult(secret string) ToolResult {
	return ToolResult{
		Content: "Read 42 lines from notes/todo.md (1.2 KiB).\n- buy milk\n- call Ann about the " + secret + " review",
		Data: map[string]any{
			"path":             "notes/todo.md",
			"lines":            42,
			"bytes":            1234,
			"truncated":        false,
			"executionStarted": true,
		},
		ModelOutput: "",
	}
}

func BenchmarkRedactSmallResult(b *testing.B) {
	red := New(Secret{Value: "ghp_boundSecretValue123", Name: "GH", Source: "env:GH"})
	b.Run("no secrets", func(b *testing.B) {
		r := smallResult("quarterly")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Redact(r, red); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one secret", func(b *testing.B) {
		r := smallResult("ghp_boundSecretValue123")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Redact(r, red); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("discovered", func(b *testing.B) {
		r := smallResult("token=discovered-9999")
		r.Data["api_key"] = "sk-abcdef123456"
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Redact(r, red); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStream(b *testing.B) {
	chunk := []byte(strings.Repeat("output line without secrets, mostly ascii text\n", 170)) // ~8 KiB
	repl := map[string]string{"ghp_boundSecretValue123": "<redacted:GH>", "another-secret": "<redacted:X>"}
	b.SetBytes(int64(len(chunk)))
	s := NewStream(discard{}, repl)
	for b.Loop() {
		_, _ = s.Write(chunk)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func BenchmarkDiscoverLargeText(b *testing.B) {
	text := strings.Repeat("key=value a=b https://example.com/x?y=1 --flag on Authorization: none\n", 10000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Discover(text)
	}
}
