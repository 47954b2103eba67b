package provider

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestResolve(t *testing.T) {
	custom := Config{Custom: map[string]CustomProfile{
		"local":   {APIMode: ModeOpenAIChat, BaseURL: "http://127.0.0.1:8080/v1/", APIKeyEnv: "LOCAL_KEY", APIKey: "from-config"},
		"claude":  {APIMode: ModeAnthropicMessages, BaseURL: "https://proxy.test", APIKey: "k"},
		"nokey":   {APIMode: ModeOpenAIChat, BaseURL: "https://x.test", APIKeyEnv: "NOKEY_KEY"},
		"nohint":  {APIMode: ModeOpenAIChat, BaseURL: "https://x.test"},
		"badmode": {APIMode: "responses", BaseURL: "https://x.test", APIKey: "k"},
		"badurl":  {APIMode: ModeOpenAIChat, BaseURL: "x.test/v1", APIKey: "k"},
	}}
	tests := []struct {
		name string
		in   ResolveInput
		want Resolved
		code string // error code, "" for success
		msg  string // exact error message
	}{
		{name: "nothing configured",
			want: Resolved{ID: "fake", APIMode: "fake", Model: "fake/demo"}},
		{name: "auto everywhere",
			in:   ResolveInput{Flag: "auto", CoreProvider: "AUTO", FallbackProvider: "auto", Config: Config{Default: "auto"}},
			want: Resolved{ID: "fake", APIMode: "fake", Model: "fake/demo"}},
		{name: "flag wins",
			in:   ResolveInput{Flag: "fake", CoreProvider: "openai", Model: "my-model"},
			want: Resolved{ID: "fake", APIMode: "fake", Model: "my-model"}},
		{name: "core provider when flag is auto",
			in:   ResolveInput{Flag: "auto", CoreProvider: "anthropic", Getenv: env("ANTHROPIC_API_KEY", "a")},
			want: Resolved{ID: "anthropic", APIMode: ModeAnthropicMessages, Model: "claude-sonnet-4-5", BaseURL: "https://api.anthropic.com"}},
		{name: "fallback provider",
			in:   ResolveInput{CoreProvider: "auto", FallbackProvider: "deepseek", Getenv: env("DEEPSEEK_API_KEY", "d")},
			want: Resolved{ID: "deepseek", APIMode: ModeOpenAIChat, Model: "deepseek-v4-pro", BaseURL: "https://api.deepseek.com/v1"}},
		{name: "config default",
			in:   ResolveInput{Config: Config{Default: "openai"}, Getenv: env("OPENAI_API_KEY", "o")},
			want: Resolved{ID: "openai", APIMode: ModeOpenAIChat, Model: "gpt-5.5", BaseURL: "https://api.openai.com/v1"}},
		{name: "model chain: core model",
			in:   ResolveInput{Flag: "openai", CoreModel: "core-m", FallbackModel: "fb-m", Getenv: env("OPENAI_API_KEY", "o")},
			want: Resolved{ID: "openai", APIMode: ModeOpenAIChat, Model: "core-m", BaseURL: "https://api.openai.com/v1"}},
		{name: "model chain: fallback model",
			in:   ResolveInput{Flag: "openai", FallbackModel: "fb-m", Getenv: env("OPENAI_API_KEY", "o")},
			want: Resolved{ID: "openai", APIMode: ModeOpenAIChat, Model: "fb-m", BaseURL: "https://api.openai.com/v1"}},
		{name: "model flag wins",
			in:   ResolveInput{Flag: "openai", Model: "flag-m", CoreModel: "core-m", Getenv: env("OPENAI_API_KEY", "o")},
			want: Resolved{ID: "openai", APIMode: ModeOpenAIChat, Model: "flag-m", BaseURL: "https://api.openai.com/v1"}},
		{name: "config base URL override",
			in:   ResolveInput{Flag: "openai", Config: Config{Builtin: map[string]BuiltinOverride{"openai": {BaseURL: "https://gw.test/v1"}}}, Getenv: env("OPENAI_API_KEY", "o")},
			want: Resolved{ID: "openai", APIMode: ModeOpenAIChat, Model: "gpt-5.5", BaseURL: "https://gw.test/v1"}},
		{name: "environment base URL beats config",
			in:   ResolveInput{Flag: "anthropic", Config: Config{Builtin: map[string]BuiltinOverride{"anthropic": {BaseURL: "https://gw.test"}}}, Getenv: env("ANTHROPIC_API_KEY", "a", "ANTHROPIC_BASE_URL", "http://user:pw@127.0.0.1:9/")},
			want: Resolved{ID: "anthropic", APIMode: ModeAnthropicMessages, Model: "claude-sonnet-4-5", BaseURL: "http://127.0.0.1:9"}},
		{name: "second key variable",
			in:   ResolveInput{Flag: "zai", Getenv: env("GLM_API_KEY", "g")},
			want: Resolved{ID: "zai", APIMode: ModeOpenAIChat, Model: "glm-5.2", BaseURL: "https://api.z.ai/api/paas/v4"}},
		{name: "normalised reference",
			in:   ResolveInput{Flag: " MiniMax_CN ", Getenv: env("MINIMAX_CN_API_KEY", "m")},
			want: Resolved{ID: "minimax-cn", APIMode: ModeAnthropicMessages, Model: "MiniMax-M3", BaseURL: "https://api.minimaxi.com/anthropic"}},
		{name: "builtin without a suggested model",
			in:   ResolveInput{Flag: "siliconflow", Getenv: env("SILICONFLOW_API_KEY", "s")},
			code: demiurge.ECONFIG, msg: "provider siliconflow: no model configured; pass --model or set model.model_name in agent.yaml (`demiurge setup model set`)"},
		{name: "model option outside the protocol's range",
			in:   ResolveInput{Flag: "anthropic", CoreModelOptions: map[string]any{"temperature": 1.5}, Getenv: env("ANTHROPIC_API_KEY", "a")},
			code: demiurge.ECONFIG, msg: "model.model_options.temperature: must be a number between 0 and 1, got 1.5 for anthropic-messages"},
		{name: "model option of another protocol",
			in:   ResolveInput{Flag: "anthropic", FallbackModelOptions: map[string]any{"reasoning_effort": "high"}, Getenv: env("ANTHROPIC_API_KEY", "a")},
			code: demiurge.ECONFIG, msg: "model.model_options.reasoning_effort: not an option of anthropic-messages (known: max_tokens, temperature, thinking_budget, top_k, top_p)"},
		{name: "custom profile key from its variable",
			in:   ResolveInput{Flag: "local", Model: "llama", Config: custom, Getenv: env("LOCAL_KEY", "l")},
			want: Resolved{ID: "local", APIMode: ModeOpenAIChat, Model: "llama", BaseURL: "http://127.0.0.1:8080/v1"}},
		{name: "custom profile key from config",
			in:   ResolveInput{CoreProvider: "claude", CoreModel: "c", Config: custom},
			want: Resolved{ID: "claude", APIMode: ModeAnthropicMessages, Model: "c", BaseURL: "https://proxy.test"}},
		{name: "missing key",
			in:   ResolveInput{Flag: "openai"},
			code: demiurge.ECONFIG, msg: "provider openai: API key missing; set OPENAI_API_KEY"},
		{name: "missing key of custom profile",
			in:   ResolveInput{Flag: "nokey", Model: "m", Config: custom},
			code: demiurge.ECONFIG, msg: "provider nokey: API key missing; set NOKEY_KEY"},
		{name: "missing key of custom profile without variable",
			in:   ResolveInput{Flag: "nohint", Model: "m", Config: custom},
			code: demiurge.ECONFIG, msg: "provider nohint: API key missing; set providers.custom.nohint.api_key_env (or api_key) in config.yaml"},
		{name: "custom profile without model",
			in:   ResolveInput{Flag: "claude", Config: custom},
			code: demiurge.ECONFIG, msg: "provider claude: no model configured; pass --model or set model.model_name in agent.yaml"},
		{name: "unknown profile",
			in:   ResolveInput{Flag: "nope", Config: custom},
			code: demiurge.EINVALID, msg: "unknown provider profile: nope (known: anthropic, badmode, badurl, claude, dashscope, deepseek, fake, local, minimax, minimax-cn, moonshot, nohint, nokey, openai, openrouter, siliconflow, zai)"},
		{name: "unknown profile from core",
			in:   ResolveInput{Flag: "auto", CoreProvider: "gone"},
			code: demiurge.EINVALID, msg: "unknown provider profile: gone (known: anthropic, dashscope, deepseek, fake, minimax, minimax-cn, moonshot, openai, openrouter, siliconflow, zai)"},
		{name: "unknown api mode",
			in:   ResolveInput{Flag: "badmode", Model: "m", Config: custom},
			code: demiurge.ECONFIG, msg: `providers.custom.badmode.api_mode: unknown api_mode "responses" (want openai-chat or anthropic-messages)`},
		{name: "bad custom URL",
			in:   ResolveInput{Flag: "badurl", Model: "m", Config: custom},
			code: demiurge.ECONFIG, msg: `providers.custom.badurl.base_url: "x.test/v1" is not an absolute http or https URL`},
		{name: "bad environment URL",
			in:   ResolveInput{Flag: "openai", Getenv: env("OPENAI_API_KEY", "o", "OPENAI_BASE_URL", "api.test")},
			code: demiurge.ECONFIG, msg: `provider openai: base URL "api.test" is not an absolute http or https URL`},
		{name: "custom profile shadowing a builtin",
			in:   ResolveInput{Flag: "openai", Config: Config{Custom: map[string]CustomProfile{"openai": {APIMode: ModeOpenAIChat, BaseURL: "https://x.test"}}}, Getenv: env("OPENAI_API_KEY", "o")},
			code: demiurge.ECONFIG, msg: `providers.custom.openai: "openai" is a builtin profile; set providers.builtin.openai.base_url to change its URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.Getenv == nil {
				tt.in.Getenv = env()
			}
			p, got, err := Resolve(tt.in)
			if tt.code != "" {
				if err == nil {
					t.Fatalf("resolved %+v, want error %q", got, tt.msg)
				}
				if demiurge.ErrorCode(err) != tt.code || err.Error() != tt.msg {
					t.Fatalf("err = %s %q, want %s %q", demiurge.ErrorCode(err), err, tt.code, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			limits := got.Limits
			got.Limits = demiurge.ModelLimits{} // TestResolvedLimits checks them
			if limits.ContextWindow <= limits.MaxOutputTokens || limits.MaxOutputTokens <= 0 {
				t.Errorf("resolved limits %+v: the window must exceed a positive output limit", limits)
			}
			if got != tt.want {
				t.Errorf("resolved %+v, want %+v", got, tt.want)
			}
			var ok bool
			switch got.APIMode {
			case ModeFake:
				_, ok = p.(*Fake)
			case ModeOpenAIChat:
				_, ok = p.(*OpenAI)
			case ModeAnthropicMessages:
				_, ok = p.(*Anthropic)
			}
			if !ok {
				t.Errorf("provider %T for mode %s", p, got.APIMode)
			}
		})
	}
}

func TestResolvedProviderTalksToTheEndpoint(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"type":"message","content":[{"type":"text","text":"hi from anthropic"}]}`)
	})
	p, res, err := Resolve(ResolveInput{
		Flag:       "anthropic",
		Getenv:     env("ANTHROPIC_API_KEY", testKey, "ANTHROPIC_BASE_URL", srv.URL),
		HTTPClient: srv.Client(),
		Options:    testOptions(&sleepLog{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), demiurge.ModelRequest{Model: res.Model, Messages: msgs("user", "hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "hi from anthropic" || rec.header.Get("X-Api-Key") != testKey || rec.lastBody(t)["model"] != "claude-sonnet-4-5" {
		t.Errorf("content %q, key header %q, body %v", resp.Content, rec.header.Get("X-Api-Key"), rec.lastBody(t))
	}
}

func TestResolveSharesTheFakeScript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(`[{"content":"first"},{"content":"second"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	fakes := &Fakes{}
	p1, _, err := Resolve(ResolveInput{FakeScript: path, Fakes: fakes})
	if err != nil {
		t.Fatal(err)
	}
	// The same file by another spelling of its path, as a second core would.
	p2, _, err := Resolve(ResolveInput{Flag: "fake", FakeScript: filepath.Join(dir, ".", "script.json"), Fakes: fakes})
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Fatal("two resolutions of one script returned different providers")
	}
	var got []string
	for _, p := range []demiurge.Provider{p1, p2, p1} {
		resp, err := p.Complete(context.Background(), demiurge.ModelRequest{Messages: msgs("user", "u")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Content)
	}
	if want := []string{"first", "second", "[fake] u"}; !reflect.DeepEqual(got, want) {
		t.Errorf("responses = %q, want %q", got, want)
	}

	// No script: a stateless fake each time.
	p3, _, err := Resolve(ResolveInput{Fakes: fakes})
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p1 {
		t.Error("the scripted fake was returned without a script")
	}
}

func TestResolveBadFakeScriptIsNotCached(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(`[{"contents":"typo"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	fakes := &Fakes{}
	_, _, err := Resolve(ResolveInput{FakeScript: path, Fakes: fakes})
	checkErr(t, err, demiurge.ECONFIG, `fake script `+path+`: responses[0]: unknown key(s) "contents"`)
	if err := os.WriteFile(path, []byte(`[{"content":"fixed"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _, err := Resolve(ResolveInput{FakeScript: path, Fakes: fakes})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := p.Complete(context.Background(), demiurge.ModelRequest{}, nil)
	if resp.Content != "fixed" {
		t.Errorf("content = %q, want the fixed script", resp.Content)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"empty", Config{}, ""},
		{"good", Config{Default: "local", Builtin: map[string]BuiltinOverride{"openai": {BaseURL: "https://gw.test/v1"}},
			Custom: map[string]CustomProfile{"local": {APIMode: ModeAnthropicMessages, BaseURL: "http://127.0.0.1:1"}}}, ""},
		{"default auto", Config{Default: "auto"}, ""},
		{"unknown builtin", Config{Builtin: map[string]BuiltinOverride{"openia": {}}},
			"providers.builtin.openia: not a builtin profile (known: anthropic, dashscope, deepseek, minimax, minimax-cn, moonshot, openai, openrouter, siliconflow, zai)"},
		{"bad builtin URL", Config{Builtin: map[string]BuiltinOverride{"openai": {BaseURL: "ftp://x"}}},
			`providers.builtin.openai.base_url: "ftp://x" is not an absolute http or https URL`},
		{"reserved custom id", Config{Custom: map[string]CustomProfile{"fake": {APIMode: ModeOpenAIChat, BaseURL: "https://x.test"}}},
			`providers.custom.fake: "fake" is reserved`},
		{"custom without URL", Config{Custom: map[string]CustomProfile{"x": {APIMode: ModeOpenAIChat}}},
			"providers.custom.x.base_url: required"},
		{"unknown default", Config{Default: "nope"}, "providers.default: unknown provider profile: nope (known: anthropic, dashscope, deepseek, fake, minimax, minimax-cn, moonshot, openai, openrouter, siliconflow, zai)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.msg || demiurge.ErrorCode(err) != demiurge.ECONFIG {
				t.Fatalf("err = %v, want ECONFIG %q", err, tt.msg)
			}
		})
	}
}

func TestDeepseekThinking(t *testing.T) {
	for model, on := range map[string]bool{"deepseek-reasoner": true, "deepseek-v4": true, "deepseek-v3.2": false, "deepseek-chat": false} {
		if got := deepseekThinking(model) != nil; got != on {
			t.Errorf("thinking for %s = %v, want %v", model, got, on)
		}
	}
}
