package provider

import (
	"os"
	"strings"
)

// Sources says where each choice Resolve makes for in comes from, for
// status output: labels, never a key or a secret.
type Sources struct {
	// Provider: "cli" (--provider), "core" (the core's model.provider),
	// "fallback" (the global fallback core's), "config" (config.yaml
	// providers.default) or "default" (the fake provider).
	Provider string
	// Model: "cli", "core", "fallback", or "profile" (the profile's own
	// default).
	Model string
	// BaseURL: "env:<variable>", "config:providers.builtin.<id>.base_url",
	// "config:providers.custom.<id>.base_url", "profile" (the vendor's
	// URL), or "not configured" (the fake provider).
	BaseURL string
	// APIKey: "env:<variable>", "config:providers.custom.<id>.api_key", or
	// "not configured".
	APIKey string
}

// ResolveSources reports where Resolve(in) takes its choices from, by the
// same rules, without building a provider; a profile that does not
// resolve has the labels known before the failure and "not configured"
// for the rest.
func ResolveSources(in ResolveInput) Sources {
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s := Sources{Provider: "default", Model: "profile", BaseURL: "not configured", APIKey: "not configured"}
	id := FakeID
	for _, c := range []struct{ label, id string }{{"cli", in.Flag}, {"core", in.CoreProvider}, {"fallback", in.FallbackProvider}, {"config", in.Config.Default}} {
		if v := strings.TrimSpace(c.id); v != "" && !isAuto(v) {
			s.Provider, id = c.label, NormalizeID(v)
			break
		}
	}
	for _, c := range []struct{ label, model string }{{"cli", in.Model}, {"core", in.CoreModel}, {"fallback", in.FallbackModel}} {
		if strings.TrimSpace(c.model) != "" {
			s.Model = c.label
			break
		}
	}
	builtin, custom, err := in.Config.lookup(id)
	switch {
	case err != nil || (builtin == nil && custom == nil):
	case builtin != nil:
		s.BaseURL = "profile"
		if o := in.Config.Builtin[id]; strings.TrimSpace(o.BaseURL) != "" {
			s.BaseURL = "config:providers.builtin." + id + ".base_url"
		}
		if builtin.baseURLEnv != "" && strings.TrimSpace(getenv(builtin.baseURLEnv)) != "" {
			s.BaseURL = "env:" + builtin.baseURLEnv
		}
		for _, env := range builtin.keyEnv {
			if strings.TrimSpace(getenv(env)) != "" {
				s.APIKey = "env:" + env
				break
			}
		}
	default:
		s.BaseURL = "config:providers.custom." + id + ".base_url"
		switch {
		case custom.APIKeyEnv != "" && strings.TrimSpace(getenv(custom.APIKeyEnv)) != "":
			s.APIKey = "env:" + custom.APIKeyEnv
		case strings.TrimSpace(custom.APIKey) != "":
			s.APIKey = "config:providers.custom." + id + ".api_key"
		}
	}
	return s
}
