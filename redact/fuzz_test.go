package redact

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// markerRe finds inline markers. A secret that overlaps marker text (its
// value contains "redacted", say) is not a leak of the input.
var markerRe = regexp.MustCompile(`<redacted[^<>]*>`)

// leaks reports an occurrence of secret in s that overlaps no marker.
func leaks(s, secret string) bool {
	regions := markerRe.FindAllStringIndex(s, -1)
	for from := 0; ; {
		i := strings.Index(s[from:], secret)
		if i < 0 {
			return false
		}
		start := from + i
		end := start + len(secret)
		covered := false
		for _, r := range regions {
			if start < r[1] && end > r[0] {
				covered = true
				break
			}
		}
		if !covered {
			return true
		}
		from = start + 1
	}
}

// outputStrings collects every string and mapping key of a redacted value.
func outputStrings(v any, into *[]string) {
	switch x := v.(type) {
	case string:
		*into = append(*into, x)
	case map[string]any:
		if isMarker(x) { // its keys are structure, not input text
			*into = append(*into, x["name"].(string), x["source"].(string))
			return
		}
		for k, e := range x {
			*into = append(*into, k)
			outputStrings(e, into)
		}
	case []any:
		for _, e := range x {
			outputStrings(e, into)
		}
	}
}

// The seed corpora are in testdata/fuzz/FuzzDiscover and FuzzStream: JSON
// tool results, URLs with credentials, command lines, headers, markers.

func FuzzDiscover(f *testing.F) {
	f.Fuzz(func(t *testing.T, data string) {
		var v any
		if json.Unmarshal([]byte(data), &v) != nil {
			v = data
		}
		secrets := Discover(v)
		for _, s := range secrets {
			if len([]rune(strings.TrimSpace(s.Value))) < MinSecretLen {
				t.Fatalf("short secret %q", s.Value)
			}
			for _, o := range secrets {
				if strings.Contains(s.Source, o.Value) && !markerRe.MatchString(s.Source) {
					t.Fatalf("source %q holds secret %q", s.Source, o.Value)
				}
			}
		}
		for _, view := range AllViews() {
			out, err := RedactValue(v, view)
			if err != nil {
				t.Fatalf("%s: %v", view, err)
			}
			var strs []string
			outputStrings(out, &strs)
			for _, s := range secrets {
				for _, o := range strs {
					if leaks(o, s.Value) {
						t.Fatalf("%s view leaks %q (%s) in %q", view, s.Value, s.Name, o)
					}
				}
			}
		}
	})
}

func FuzzStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data string, cut1, cut2 uint16) {
		repl := map[string]string{}
		for _, s := range Discover(data) {
			repl[s.Value] = Marker(s.Name)
		}
		if len(data) >= 8 { // an overlapping value that discovery did not choose
			repl[data[2:6]] = "<redacted:X>"
		}
		want := naiveReplace(data, repl)
		if got := ReplaceAll(data, repl); got != want {
			t.Fatalf("ReplaceAll = %q, want %q", got, want)
		}
		a := min(int(cut1), len(data))
		b := min(max(int(cut2), a), len(data))
		got := streamChunks(t, []string{data[:a], data[a:b], data[b:]}, repl)
		if got != want {
			t.Fatalf("stream cut at %d,%d = %q, want %q", a, b, got, want)
		}
		for v := range repl {
			if len(v) >= MinSecretLen && leaks(got, v) {
				t.Fatalf("stream output leaks %q: %q", v, got)
			}
		}
	})
}

// FuzzStreamChunks splits the input at random boundaries and checks that
// Stream forwards exactly ReplaceAll of the whole text, with the turn's
// whole set: what Discover finds (shapes included), a value planted inside
// another, and a bound value; and that the output holds none of them.
func FuzzStreamChunks(f *testing.F) {
	f.Add("token ghp_"+gen(12, alnum, 36)+" and AKIA"+gen(53, upper32, 16)+" end", uint64(1))
	f.Add("password=hunter22x\nagain hunter22x\nhttps://u:pw123456@h/?key=k1234567\n", uint64(2))
	f.Add(`{"api_key":"sk-proj-`+gen(5, alnum, 40)+`","n":1} Authorization: Custom s3cr3t`, uint64(3))
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", uint64(4))
	f.Fuzz(func(t *testing.T, data string, seed uint64) {
		repl := map[string]string{"bound-secret-value": "<redacted:BOUND>"}
		for _, s := range Discover(data) {
			repl[s.Value] = Marker(s.Name)
		}
		if len(data) >= 10 {
			repl[data[3:9]] = "<redacted:X>"
		}
		want := ReplaceAll(data, repl)
		if ref := naiveReplace(data, repl); want != ref {
			t.Fatalf("ReplaceAll = %q, reference %q", want, ref)
		}
		r := rand.New(rand.NewPCG(seed, seed>>32))
		chunks := randomChunks(r, data)
		if got := streamChunks(t, chunks, repl); got != want {
			t.Fatalf("stream of %q = %q, want %q", chunks, got, want)
		}
		for v := range repl {
			if len(v) >= MinSecretLen && leaks(want, v) {
				t.Fatalf("output leaks %q: %q", v, want)
			}
		}
	})
}
