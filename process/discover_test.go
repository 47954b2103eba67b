package process

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var testAssignment = regexp.MustCompile(`password=(\S{6,})`)

// discoverPasswords stands in for redact's discovery: password=VALUE.
func discoverPasswords(text string) map[string]string {
	out := map[string]string{}
	for _, m := range testAssignment.FindAllStringSubmatch(text, -1) {
		out[m[1]] = "<redacted:PASSWORD>"
	}
	return out
}

// runDiscovering feeds chunks the way drain.run does.
func runDiscovering(repl map[string]string, chunks []string) string {
	var out bytes.Buffer
	r := newDiscoveringRedactor(newStreamRedactor(&out, repl), repl, discoverPasswords)
	var pending []byte
	for _, c := range chunks {
		data := append(pending, c...)
		held := r.process(data, false)
		if held > r.holdMax() {
			panic("held more than holdMax")
		}
		pending = append([]byte(nil), data[len(data)-held:]...)
	}
	r.process(pending, true)
	return out.String()
}

func TestDiscoveringRedactor(t *testing.T) {
	known := map[string]string{"KNOWNVALUE": "<redacted:K>"}
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"known value", []string{"a KNOWNVALUE b\n"}, "a <redacted:K> b\n"},
		{"discovered in its own line", []string{"password=hunter22x\n"}, "password=<redacted:PASSWORD>\n"},
		{"later lines too", []string{"password=hunter22x\nbare hunter22x\n", "again hunter22x"}, "password=<redacted:PASSWORD>\nbare <redacted:PASSWORD>\nagain <redacted:PASSWORD>"},
		{"assignment split across reads", []string{"x\npass", "word=hun", "ter22x\nhunter22x\n"}, "x\npassword=<redacted:PASSWORD>\n<redacted:PASSWORD>\n"},
		{"value split across reads", []string{"password=hunt", "er22x KNOWN", "VALUE\n"}, "password=<redacted:PASSWORD> <redacted:K>\n"},
		{"at the end without newline", []string{"a\n", "password=hunter22x"}, "a\npassword=<redacted:PASSWORD>"},
		{"nothing to find", []string{"hello\n", "world"}, "hello\nworld"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runDiscovering(known, tt.chunks); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDiscoveringRedactorAnyChunking: whatever the chunking, a discovered
// value never appears after the line it is discovered in, and the known
// values never appear at all.
func TestDiscoveringRedactorAnyChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	lines := []string{"plain text", "password=alpha123", "alpha123 again", "KNOWNVALUE", "password=beta4567 and alpha123", "beta4567", strings.Repeat("y", 5000) + " password=gamma8910", "gamma8910 end"}
	known := map[string]string{"KNOWNVALUE": "<redacted:K>"}
	for iter := range 2000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(lines[rng.IntN(len(lines))])
			b.WriteByte('\n')
		}
		whole := b.String()
		var chunks []string
		for rest := whole; len(rest) > 0; {
			k := 1 + rng.IntN(min(len(rest), 700))
			chunks = append(chunks, rest[:k])
			rest = rest[k:]
		}
		got := runDiscovering(known, chunks)
		if strings.Contains(got, "KNOWNVALUE") {
			t.Fatalf("iteration %d: known value leaked: %q", iter, got)
		}
		// Every secret discovered anywhere is gone from its line on: raw
		// occurrences may remain only before the line that reveals it.
		for _, v := range []string{"alpha123", "beta4567", "gamma8910"} {
			first := strings.Index(whole, "password="+v)
			if first < 0 {
				continue
			}
			lineStart := strings.LastIndexByte(whole[:first], '\n') + 1
			allowed := strings.Count(whole[:lineStart], v)
			if n := strings.Count(got, v); n > allowed {
				t.Fatalf("iteration %d: %s appears %d times, at most %d (before its line) allowed\ninput %.300q\ngot %.300q", iter, v, n, allowed, whole, got)
			}
		}
	}
}
