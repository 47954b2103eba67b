package provider

import "testing"

// A builtin profile's URL and key sources follow Resolve's order: the
// environment over config.yaml over the profile; the provider and model
// the first choice set.
func TestResolveSourcesBuiltin(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-x"}
	in := ResolveInput{
		CoreProvider: "auto", FallbackProvider: "openai", FallbackModel: "gpt-x",
		Config: Config{Builtin: map[string]BuiltinOverride{"openai": {BaseURL: "https://proxy.example.com/v1"}}},
		Getenv: func(k string) string { return env[k] },
	}
	s := ResolveSources(in)
	want := Sources{Provider: "fallback", Model: "fallback", BaseURL: "config:providers.builtin.openai.base_url", APIKey: "env:OPENAI_API_KEY"}
	if s != want {
		t.Fatalf("sources %+v, want %+v", s, want)
	}
	env["OPENAI_BASE_URL"] = "https://env.example.com/v1"
	in.Flag, in.FallbackModel = "openai", ""
	delete(env, "OPENAI_API_KEY")
	s = ResolveSources(in)
	want = Sources{Provider: "cli", Model: "profile", BaseURL: "env:OPENAI_BASE_URL", APIKey: "not configured"}
	if s != want {
		t.Fatalf("sources %+v, want %+v", s, want)
	}
	if s := ResolveSources(ResolveInput{Getenv: func(string) string { return "" }}); s.Provider != "default" || s.BaseURL != "not configured" {
		t.Fatalf("the fake provider: %+v", s)
	}
}
