package effect

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

const secret = "sk-live-7f3a9c1e5b"

// mustNotLeak fails if the JSON form of v contains the secret.
func mustNotLeak(t *testing.T, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("preview does not encode: %v", err)
	}
	if strings.Contains(string(raw), secret) {
		t.Fatalf("secret leaked: %s", raw)
	}
}

func TestPreviewRedactsByName(t *testing.T) {
	args := map[string]any{
		"path":          "notes.txt",
		"api_key":       secret,
		"X-Api-Key":     secret,
		"github_token":  secret,
		"db-password":   secret,
		"secret_name":   secret,                                    // substring rule
		"Authorization": "Bearer " + secret,                        // exact name
		"credentials":   map[string]any{"user": "a", "pw": secret}, // container under a sensitive name
		"headers":       map[string]any{"Cookie": secret, "Accept": "text/plain"},
		"list":          []any{map[string]any{"token": secret, "n": 1.0}},
		"typed":         map[string]string{"refresh_token": secret},
		"opaque":        demiurge.NewSecret(secret),
		"count":         3.0,
		"flag":          true,
		"none":          nil,
	}
	got := Preview(args, 0)
	mustNotLeak(t, got)
	for _, k := range []string{"api_key", "X-Api-Key", "github_token", "db-password", "secret_name", "Authorization", "credentials"} {
		if got[k] != "<redacted>" {
			t.Errorf("%s=%v, want <redacted>", k, got[k])
		}
	}
	if got["path"] != "notes.txt" || got["count"] != 3.0 || got["flag"] != true || got["none"] != nil {
		t.Errorf("plain values changed: %v", got)
	}
	headers := got["headers"].(map[string]any)
	if headers["Cookie"] != "<redacted>" || headers["Accept"] != "text/plain" {
		t.Errorf("headers=%v", headers)
	}
	if inner := got["list"].([]any)[0].(map[string]any); inner["token"] != "<redacted>" || inner["n"] != 1.0 {
		t.Errorf("list=%v", got["list"])
	}
	if typed := got["typed"].(map[string]any); typed["refresh_token"] != "<redacted>" {
		t.Errorf("typed=%v", typed)
	}
	// The caller's map is not modified.
	if args["api_key"] != secret {
		t.Fatal("Preview mutated its input")
	}
}

func TestPreviewRedactsCommandsAndText(t *testing.T) {
	got := Preview(map[string]any{
		"command": "curl -H 'Authorization: Bearer " + secret + "' --api-key=" + secret + " --token " + secret + " GITHUB_TOKEN=" + secret + " https://x",
		"url":     "https://api.example.com/v1?token=" + secret + "&page=2",
		"summary": "deploy with password=" + secret,
	}, 0)
	mustNotLeak(t, got)
	if cmd := got["command"].(string); !strings.Contains(cmd, "curl") || !strings.Contains(cmd, "https://x") {
		t.Errorf("command lost its shape: %q", cmd)
	}
	if u := got["url"].(string); u != "https://api.example.com/v1?token=<redacted>&page=2" {
		t.Errorf("url=%q", u)
	}
}

func TestPreviewBounds(t *testing.T) {
	long := strings.Repeat("é", 300)
	deep := map[string]any{"l2": map[string]any{"l3": map[string]any{"l4": map[string]any{"l5": "x"}}}}
	many := make([]any, 25)
	for i := range many {
		many[i] = float64(i)
	}
	wide := map[string]any{}
	for i := range 23 {
		wide[fmt.Sprintf("k%02d", i)] = 1.0
	}
	longKey := strings.Repeat("k", 100)
	got := Preview(map[string]any{"long": long, "deep": deep, "many": many, "wide": wide, longKey: "v"}, 0)

	if want := strings.Repeat("é", 256) + "...[truncated 44 chars]"; got["long"] != want {
		t.Errorf("long=%q", got["long"])
	}
	l4 := got["deep"].(map[string]any)["l2"].(map[string]any)["l3"].(map[string]any)
	if l4["l4"] != "<truncated>" {
		t.Errorf("depth not bounded: %v", got["deep"])
	}
	items := got["many"].([]any)
	if len(items) != 21 || items[20] != "<truncated 5 items>" || items[19] != 19.0 {
		t.Errorf("many=%v", items)
	}
	w := got["wide"].(map[string]any)
	if len(w) != 21 || w["_truncated_items"] != 3 || w["k19"] != 1.0 || w["k20"] != nil {
		t.Errorf("wide=%v", w)
	}
	if got[longKey] != nil || got[strings.Repeat("k", 80)+"...[truncated 20 chars]"] != "v" {
		t.Errorf("long key not cut: %v", got)
	}
}

func TestPreviewFitsMaxChars(t *testing.T) {
	args := map[string]any{}
	for i := range 10 {
		args[fmt.Sprintf("f%d", i)] = strings.Repeat("x", 250)
	}
	for _, max := range []int{2048, 600, 120, 30} {
		got := Preview(args, max)
		raw, _ := json.Marshal(got)
		if len(raw) > max {
			t.Errorf("max=%d: preview is %d bytes: %s", max, len(raw), raw)
		}
		if len(raw) < 2048/4 && max >= 600 && got["_truncated"] != nil {
			t.Errorf("max=%d: keys dropped although replacing values was enough", max)
		}
	}
	// Replacing values keeps every key while it is enough.
	got := Preview(args, 600)
	if len(got) != 10 || got["f0"] != "<truncated>" {
		t.Errorf("600: %v", got)
	}
	// Below that, keys go from the end and the preview says so.
	got = Preview(args, 120)
	if got["_truncated"] != true || got["f9"] != nil {
		t.Errorf("120: %v", got)
	}
	// A small preview is returned whole.
	small := map[string]any{"a": "b"}
	if got := Preview(small, 0); !reflect.DeepEqual(got, small) {
		t.Errorf("small=%v", got)
	}
}

func TestPreviewOddValues(t *testing.T) {
	got := Preview(map[string]any{"nan": math.NaN(), "ch": make(chan int), "n": json.Number("12")}, 0)
	if _, err := json.Marshal(got); err != nil {
		t.Fatalf("preview does not encode: %v", err)
	}
	if got["nan"] != "NaN" || got["ch"] != "<unserializable>" || got["n"] != json.Number("12") {
		t.Errorf("got %v", got)
	}
	if got := Preview(nil, 0); got == nil || len(got) != 0 {
		t.Errorf("nil args: %v", got)
	}
}

func TestSanitizePreviewIsIdempotentOnPreview(t *testing.T) {
	args := map[string]any{
		"long": strings.Repeat("a", 1000), "token": secret,
		"many": make([]any, 40), "nested": map[string]any{"password": secret},
	}
	p := Preview(args, 0)
	if again := sanitizePreview(p); !reflect.DeepEqual(again, p) {
		t.Fatalf("sanitize changed a preview:\n%v\n%v", p, again)
	}
	// Raw arguments handed over by mistake are still redacted and bounded.
	raw := sanitizePreview(map[string]any{"token": secret, "body": strings.Repeat("b", 5000)})
	mustNotLeak(t, raw)
	if b, _ := json.Marshal(raw); len(b) > DefaultPreviewChars {
		t.Fatalf("raw arguments not bounded: %d bytes", len(b))
	}
}

func TestTruncateText(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc...[truncated 1 chars]"},
		{"日本語テキスト", 3, "日本語...[truncated 4 chars]"},
		{"abc", 0, "...[truncated 3 chars]"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := TruncateText(tt.in, tt.limit); got != tt.want {
			t.Errorf("TruncateText(%q, %d)=%q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}
