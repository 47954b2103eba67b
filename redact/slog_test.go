package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

func newTestLogger(secrets func() *Redactor) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	inner := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(NewHandler(inner, secrets)), &buf
}

func decodeLine(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("%v: %s", err, buf)
	}
	buf.Reset()
	return m
}

func TestHandlerRedacts(t *testing.T) {
	red := New(Secret{Value: "sekrit-value-1", Name: "TOK", Source: "env:TOK"})
	log, buf := newTestLogger(func() *Redactor { return red })

	log.Info("calling with sekrit-value-1",
		"arg", "x=sekrit-value-1",
		"password", "plain-password",
		"count", 3,
		slog.Group("req", "url", "https://h/?a=sekrit-value-1", "api_key", 12345, slog.Group("inner", "v", "sekrit-value-1")),
		"err", errors.New("failed: sekrit-value-1"),
		"obj", map[string]any{"token": "zzzz", "note": "sekrit-value-1"},
	)
	got := decodeLine(t, buf)
	checks := map[string]any{
		"msg":      "calling with <redacted:TOK>",
		"arg":      "x=<redacted:TOK>",
		"password": "<redacted>",
		"count":    float64(3),
		"err":      "failed: <redacted:TOK>",
	}
	for k, want := range checks {
		if got[k] != want {
			t.Errorf("%s = %#v, want %#v", k, got[k], want)
		}
	}
	req := got["req"].(map[string]any)
	if req["url"] != "https://h/?a=<redacted:TOK>" || req["api_key"] != "<redacted>" {
		t.Errorf("group %#v", req)
	}
	if req["inner"].(map[string]any)["v"] != "<redacted:TOK>" {
		t.Errorf("nested group %#v", req["inner"])
	}
	obj := got["obj"].(map[string]any)
	if obj["note"] != "<redacted:TOK>" || obj["token"] != "<redacted:TOKEN>" {
		t.Errorf("any value %#v", obj)
	}
	line, _ := json.Marshal(got)
	if strings.Contains(string(line), "sekrit") || strings.Contains(string(line), "plain-password") {
		t.Errorf("leak: %s", line)
	}
}

func TestHandlerWithAttrsUsesCurrentSecrets(t *testing.T) {
	var cur atomic.Pointer[Redactor]
	cur.Store(New())
	log, buf := newTestLogger(func() *Redactor { return cur.Load() })

	child := log.With("remote", "git@h:late-secret-1", "Authorization", "Bearer x").WithGroup("g").With("k", "late-secret-1")
	// The secret becomes known only after the logger was built.
	cur.Store(New(Secret{Value: "late-secret-1", Name: "LATE", Source: "env:LATE"}))
	child.Warn("m", "v", "late-secret-1")
	got := decodeLine(t, buf)
	if got["remote"] != "git@h:<redacted:LATE>" || got["Authorization"] != "<redacted>" {
		t.Errorf("WithAttrs values: %#v", got)
	}
	g := got["g"].(map[string]any)
	if g["k"] != "<redacted:LATE>" || g["v"] != "<redacted:LATE>" {
		t.Errorf("group values: %#v", g)
	}
	// The parent logger is unaffected by the child's attributes.
	log.Info("plain")
	if got := decodeLine(t, buf); got["remote"] != nil || got["g"] != nil {
		t.Errorf("parent carries child attrs: %#v", got)
	}
}

func TestHandlerNilSecrets(t *testing.T) {
	log, buf := newTestLogger(nil)
	log.Info("hello", "client_secret", "abc", "name", "n")
	got := decodeLine(t, buf)
	if got["client_secret"] != "<redacted>" || got["name"] != "n" || got["msg"] != "hello" {
		t.Errorf("%#v", got)
	}
	log, buf = newTestLogger(func() *Redactor { return nil })
	log.Info("hello", "token", "abc")
	if got := decodeLine(t, buf); got["token"] != "<redacted>" {
		t.Errorf("%#v", got)
	}
}

func TestHandlerEnabledDelegates(t *testing.T) {
	inner := slog.NewJSONHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn})
	h := NewHandler(inner, nil)
	if h.Enabled(t.Context(), slog.LevelInfo) || !h.Enabled(t.Context(), slog.LevelError) {
		t.Fatal("Enabled not delegated")
	}
}

func TestHandlerRenderFailure(t *testing.T) {
	log, buf := newTestLogger(nil)
	log.Info("m", "bad", panicky{})
	if got := decodeLine(t, buf); got["bad"] != "<redaction-failed>" {
		t.Errorf("%#v", got)
	}
}
