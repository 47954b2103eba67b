package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestRedactToolResult(t *testing.T) {
	known := New(Secret{Value: "bound-secret-42", Name: "GH", Source: "env:GH"})
	raw := ToolResult{
		Content: "fetched with key-from-data-1 and bound-secret-42",
		Data: map[string]any{
			"api_key":          "key-from-data-1",
			"executionStarted": true,
			"nested":           map[string]any{"url": "https://u:urlpass-77@h/"},
		},
		IsError:     false,
		Terminate:   true,
		ModelOutput: "model sees urlpass-77",
	}
	views, err := Redact(raw, known)
	if err != nil {
		t.Fatal(err)
	}
	if views.Failed {
		t.Fatal("Failed set")
	}
	wantContent := map[View]string{
		Model:    "fetched with <redacted> and <redacted>",
		Operator: "fetched with <redacted:API_KEY> and <redacted:GH>",
		Event:    "fetched with <redacted:API_KEY> and <redacted:GH>",
		Durable:  "fetched with <redacted:API_KEY> and <redacted:GH>",
	}
	for view, want := range wantContent {
		v := views.Get(view)
		if v.Content != want {
			t.Errorf("%s content %q, want %q", view, v.Content, want)
		}
		if !v.Terminate || v.IsError {
			t.Errorf("%s flags lost: %+v", view, v)
		}
	}
	if got := views.Operator.ModelOutput; got != "model sees <redacted:URL_PASSWORD>" {
		t.Errorf("model output %q", got)
	}
	if got := views.Operator.Data["nested"].(map[string]any)["url"]; got != "https://u:<redacted:URL_PASSWORD>@h/" {
		t.Errorf("nested url %q", got)
	}
	wantMarker := map[string]any{"redacted": true, "name": "API_KEY", "source": "field:data.api_key"}
	if got := views.Event.Data["api_key"]; !reflect.DeepEqual(got, wantMarker) {
		t.Errorf("event marker %#v", got)
	}
	if got := views.Debug.Data["api_key"].(map[string]any)["fingerprint"]; got != (Secret{Value: "key-from-data-1"}).Fingerprint() {
		t.Errorf("debug fingerprint %v", got)
	}
	for _, view := range AllViews() {
		assertClean(t, view, views.Get(view), "key-from-data-1", "bound-secret-42", "urlpass-77")
	}
	if raw.Data["api_key"] != "key-from-data-1" {
		t.Fatal("input modified")
	}
}

func assertClean(t *testing.T, view View, r ToolResult, secrets ...string) {
	t.Helper()
	text := fmt.Sprintf("%#v", r)
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s view leaks %q: %s", view, s, text)
		}
	}
}

func TestRedactToolResultFailure(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]any
		started bool
	}{
		{"String panics", map[string]any{"executionStarted": true, "v": panicky{}}, true},
		{"fmt reports a panic", map[string]any{"v": []any{holder{}}}, false},
		{"Error panics", map[string]any{"executionStarted": "yes", "e": (*codedErr)(nil)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := ToolResult{Content: "raw output token=raw-secret-1", Data: tt.data, ModelOutput: "raw"}
			views, err := Redact(raw, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if !views.Failed {
				t.Fatal("Failed not set")
			}
			want := ToolResult{
				Content:     "<redaction-failed>",
				Data:        map[string]any{"executionStarted": tt.started, "redactionFailed": true},
				IsError:     true,
				ModelOutput: "<redaction-failed>",
			}
			for _, view := range AllViews() {
				if got := views.Get(view); !reflect.DeepEqual(got, want) {
					t.Errorf("%s view %#v, want %#v", view, got, want)
				}
			}
			views.Model.Data["x"] = 1
			if _, shared := views.Operator.Data["x"]; shared {
				t.Error("failed views share one Data map")
			}
			if strings.Contains(err.Error(), "raw-secret-1") {
				t.Errorf("error leaks: %v", err)
			}
		})
	}
}

func TestRedactEmptyResult(t *testing.T) {
	views, err := Redact(ToolResult{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, view := range AllViews() {
		if got := views.Get(view); !reflect.DeepEqual(got, ToolResult{}) {
			t.Errorf("%s: %#v", view, got)
		}
	}
}

func TestRedactToolResultBoundsData(t *testing.T) {
	red := NewWithOptions(Options{Limits: map[View]Limits{Model: {MaxItems: 1, MaxStringChars: 4}}})
	views, err := Redact(ToolResult{Content: "abcdefgh", Data: map[string]any{"a": 1, "b": 2}}, red)
	if err != nil {
		t.Fatal(err)
	}
	if views.Model.Content != "abcd...[truncated 4 chars]" {
		t.Errorf("content %q", views.Model.Content)
	}
	if !reflect.DeepEqual(views.Model.Data, map[string]any{"a": 1, "<truncated>": "1 fields"}) {
		t.Errorf("data %#v", views.Model.Data)
	}
	if views.Operator.Content != "abcdefgh" {
		t.Errorf("operator view used model bounds: %q", views.Operator.Content)
	}
}

type panicErr struct{}

func (panicErr) Error() string { panic("no") }

func TestError(t *testing.T) {
	red := New(Secret{Value: "known-secret-9", Name: "K", Source: "env:K"})
	long := strings.Repeat("é", ErrorLimit+10)
	tests := []struct {
		name string
		err  error
		view View
		want string
	}{
		{"nil", nil, Model, ""},
		{"coded", demiurge.Errorf(demiurge.EINVALID, "bad\r\nkey known-secret-9"), Operator, "Error: bad  key <redacted:K>"},
		{"discovers in message", errors.New("dial https://u:pw-inline-1@h failed"), Model, "errorString: dial https://u:<redacted>@h failed"},
		{"wrapped", fmt.Errorf("open: %w", &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}), Event, "wrapError: open: open /x: file does not exist"},
		{"path error", &fs.PathError{Op: "read", Path: "known-secret-9", Err: fs.ErrClosed}, Debug,
			"PathError: read <redacted:K:" + (Secret{Value: "known-secret-9"}).Fingerprint() + ">: file already closed"},
		{"truncated", errors.New(long), Model, "errorString: " + strings.Repeat("é", ErrorLimit) + "... [truncated]"},
		{"panics", panicErr{}, Model, "panicErr: <redaction-failed>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Error(tt.err, red, tt.view); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRedactError(t *testing.T) {
	red := New(Secret{Value: "known-secret-9", Name: "K", Source: "env:K"})
	cause := &fs.PathError{Op: "open", Path: "known-secret-9", Err: fs.ErrNotExist}
	err := RedactError(fmt.Errorf("load: %w", cause), red, Operator)
	if err.Error() != "load: open <redacted:K>: file does not exist" {
		t.Fatalf("got %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("errors.Is lost")
	}
	if RedactError(nil, red, Model) != nil {
		t.Fatal("nil error wrapped")
	}
	if got := RedactError(panicErr{}, red, Model).Error(); got != "<redaction-failed>" {
		t.Fatalf("got %q", got)
	}
}

func TestRedactConcurrent(t *testing.T) {
	red := New(Secret{Value: "shared-secret-1", Name: "S", Source: "env:S"})
	raw := ToolResult{Content: "a shared-secret-1 b", Data: map[string]any{"token": "tok-abcdefgh"}}
	done := make(chan Views, 8)
	for range 8 {
		go func() {
			v, err := Redact(raw, red)
			if err != nil {
				t.Error(err)
			}
			done <- v
		}()
	}
	for range 8 {
		v := <-done
		if !strings.HasPrefix(v.Debug.Content, "a <redacted:S:") {
			t.Errorf("debug content %q", v.Debug.Content)
		}
	}
}

func TestRedactErrorsAreCoded(t *testing.T) {
	_, err := Redact(ToolResult{Data: map[string]any{"v": panicky{}}}, nil)
	if demiurge.ErrorCode(err) != demiurge.EINTERNAL {
		t.Fatalf("code %q for %v", demiurge.ErrorCode(err), err)
	}
	if _, err := New().Value(1, View(9)); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("unknown view: %v", err)
	}
}

func TestRedactDataSources(t *testing.T) {
	views, err := Redact(ToolResult{Content: "x", Data: map[string]any{"token": "abcdefgh1", "list": []any{map[string]any{"secret": "abcdefgh2"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := views.Durable.Data
	if m := d["token"].(map[string]any); m["source"] != "field:data.token" {
		t.Errorf("source %v", m["source"])
	}
	if m := d["list"].([]any)[0].(map[string]any)["secret"].(map[string]any); m["source"] != "field:data.list.0.secret" {
		t.Errorf("source %v", m["source"])
	}
	if len(views.Discovered) != 2 {
		t.Errorf("discovered %v", views.Discovered)
	}
	// A value too short to be discovered is marked by the field's own
	// path, under data.
	views, err = Redact(ToolResult{Data: map[string]any{"token": "abc", "n": map[string]any{"secret": []any{1}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := views.Event.Data["token"].(map[string]any); m["source"] != "field:data.token" {
		t.Errorf("short value source %v", m["source"])
	}
	if m := views.Event.Data["n"].(map[string]any)["secret"].(map[string]any); m["source"] != "field:data.n.secret" {
		t.Errorf("container source %v", m["source"])
	}
}

func TestErrorLimitBoundary(t *testing.T) {
	at := errors.New(strings.Repeat("é", ErrorLimit))
	if got := Error(at, nil, Model); strings.Contains(got, "[truncated]") || !strings.HasSuffix(got, "é") {
		t.Errorf("message of exactly %d characters cut: %q", ErrorLimit, got[len(got)-20:])
	}
	over := errors.New(strings.Repeat("é", ErrorLimit+1))
	if got := Error(over, nil, Model); !strings.HasSuffix(got, "é... [truncated]") {
		t.Errorf("message of %d characters not cut", ErrorLimit+1)
	}
}
