package redact

import (
	"bytes"
	"fmt"
	"slices"
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

// benchSecrets returns n secrets of 12 to 64 characters, as a turn set
// holds: API keys, tokens, passwords.
func benchSecrets(n int) map[string]string {
	repl := make(map[string]string, n)
	for i := range n {
		repl[gen(uint64(1000+i), urlsafe, 12+i%53)] = Marker("S")
	}
	return repl
}

// benchLog returns about size bytes of log-like text with one secret per
// 64 KiB.
func benchLog(size int, repl map[string]string) []byte {
	vals := make([]string, 0, len(repl))
	for v := range repl {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2026-12-01T12:%02d:%02d.%03dZ INFO request id=%08x path=/api/v1/items/%d status=200 bytes=%d user=ann@example.com\n", i/60%60, i%60, i%1000, i*2654435761, i, i*37%9000)
		if i%500 == 0 {
			fmt.Fprintf(&b, "DEBUG token %s in header\n", vals[i/500%len(vals)])
		}
	}
	return b.Bytes()[:size]
}

func BenchmarkStream200Secrets(b *testing.B) {
	repl := benchSecrets(200)
	data := benchLog(8<<20, repl)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := NewStream(discard{}, repl)
		for off := 0; off < len(data); off += 32 << 10 {
			_, _ = s.Write(data[off:min(len(data), off+32<<10)])
		}
		_ = s.Close()
	}
}

func BenchmarkRedactorString200Secrets(b *testing.B) {
	var secrets []Secret
	for v := range benchSecrets(200) {
		secrets = append(secrets, Secret{Value: v, Name: "S", Source: "env:S"})
	}
	r := New(secrets...)
	s := "Read 42 lines from notes/todo.md (1.2 KiB). Nothing secret in here, just an ordinary sentence."
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(s, Model)
	}
}
