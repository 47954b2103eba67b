package provider

import (
	"context"
	"net/http"
	"testing"

	"github.com/demiurge/demiurge"
)

// resolveAgainst resolves in with the server standing in for the vendor
// (a custom base URL of the builtin) and sends one message.
func resolveAgainst(t *testing.T, in ResolveInput, base string, srv *http.Client) Resolved {
	t.Helper()
	in.Config.Builtin = map[string]BuiltinOverride{in.Flag: {BaseURL: base}}
	in.HTTPClient, in.Options = srv, testOptions(&sleepLog{})
	p, res, err := Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), demiurge.ModelRequest{Model: res.Model, Messages: []demiurge.ModelMessage{{Role: "user", Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMoonshotProfileHeadersAndOutputLimit(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	})
	res := resolveAgainst(t, ResolveInput{Flag: "moonshot", Getenv: env("KIMI_CODING_API_KEY", testKey)}, srv.URL+"/v1", srv.Client())
	if got, want := rec.header.Get("User-Agent"), "demiurge-agent"; got != want {
		t.Errorf("User-Agent=%q, want %q", got, want)
	}
	if got, want := rec.header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Errorf("Authorization=%q, want %q (the alternate variable)", got, want)
	}
	if got, want := res.Limits.MaxOutputTokens, 32000; got != want {
		t.Errorf("output limit=%d, want %d", got, want)
	}
	if got, want := rec.lastBody(t)["max_tokens"], 32000.0; got != want {
		t.Errorf("max_tokens=%v, want %v", got, want)
	}
	if got, want := rec.path, "/v1/chat/completions"; got != want {
		t.Errorf("path=%q, want %q", got, want)
	}
}

func TestModelOptionsAreSentPerProtocol(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	})
	res := resolveAgainst(t, ResolveInput{Flag: "openai", Getenv: env("OPENAI_API_KEY", testKey),
		FallbackModelOptions: map[string]any{"temperature": 0.2, "top_p": 0.5},
		CoreModelOptions:     map[string]any{"temperature": uint64(1), "reasoning_effort": "high", "max_tokens": uint64(900)}}, srv.URL, srv.Client())
	body := rec.lastBody(t)
	for k, want := range map[string]any{"temperature": 1.0, "top_p": 0.5, "reasoning_effort": "high", "max_completion_tokens": 900.0} {
		if got := body[k]; got != want {
			t.Errorf("%s=%v, want %v", k, got, want)
		}
	}
	if res.Limits.MaxOutputTokens != 900 {
		t.Errorf("output limit=%d, want 900", res.Limits.MaxOutputTokens)
	}

	asrv, arec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"type":"message","content":[{"type":"text","text":"ok"}]}`)
	})
	resolveAgainst(t, ResolveInput{Flag: "anthropic", Getenv: env("CLAUDE_CODE_OAUTH_TOKEN", testKey),
		CoreModelOptions: map[string]any{"top_k": 5, "thinking_budget": 2048, "max_tokens": 8000}}, asrv.URL, asrv.Client())
	jsonEqual(t, "thinking", arec.lastBody(t)["thinking"], `{"budget_tokens":2048,"type":"enabled"}`)
	if got := arec.lastBody(t)["top_k"]; got != 5.0 {
		t.Errorf("top_k=%v, want 5", got)
	}
	if got := arec.lastBody(t)["max_tokens"]; got != 8000.0 {
		t.Errorf("max_tokens=%v, want 8000", got)
	}
	if got, want := arec.header.Get("Authorization"), "Bearer "+testKey; got != want || arec.header.Get("X-Api-Key") != "" {
		t.Errorf("auth headers %v, want only Authorization: Bearer", arec.header)
	}
	if got, want := arec.path, "/v1/messages"; got != want {
		t.Errorf("path=%q, want %q", got, want)
	}
}

func TestMiniMaxSpeaksAnthropicMessagesUnderItsPath(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"type":"message","content":[{"type":"text","text":"ok"}]}`)
	})
	res := resolveAgainst(t, ResolveInput{Flag: "minimax", Getenv: env("MINIMAX_API_KEY", testKey)}, srv.URL+"/anthropic", srv.Client())
	if res.APIMode != ModeAnthropicMessages || res.Model != "MiniMax-M3" {
		t.Errorf("resolved %+v", res)
	}
	if got, want := rec.path, "/anthropic/messages"; got != want {
		t.Errorf("path=%q, want %q (the original's base + /messages)", got, want)
	}
	if rec.header.Get("X-Api-Key") != testKey {
		t.Errorf("x-api-key missing: %v", rec.header)
	}
}

func TestPresetsFollowTheSpecTable(t *testing.T) {
	var ids []string
	for _, p := range Presets() {
		ids = append(ids, p.ID)
	}
	want := []string{"openai", "anthropic", "deepseek", "moonshot", "minimax", "minimax-cn", "dashscope", "zai", "siliconflow", "openrouter"}
	if len(ids) != len(want) {
		t.Fatalf("presets %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("presets %v, want %v", ids, want)
		}
	}
	if p, _ := LookupPreset("zai"); len(p.KeyEnv) != 3 || p.KeyEnv[1] != "GLM_API_KEY" {
		t.Errorf("zai keys %v", p.KeyEnv)
	}
}
