package provider

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/tokens"
)

// MinContextWindow is the smallest context window a profile or core may
// declare: below it not even a system prompt and one message fit.
const MinContextWindow = 1024

// Config is the providers: section of config.yaml.
type Config struct {
	// Default is the provider id used when neither the command line nor the
	// core names one ("" or "auto": the fake provider).
	Default string `yaml:"default" json:"default,omitempty"`
	// Builtin overrides builtin profiles, by id (only base_url).
	Builtin map[string]BuiltinOverride `yaml:"builtin" json:"builtin,omitempty"`
	// Custom declares further profiles, by id.
	Custom map[string]CustomProfile `yaml:"custom" json:"custom,omitempty"`
}

// BuiltinOverride is providers.builtin.<id>.
type BuiltinOverride struct {
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
}

// CustomProfile is providers.custom.<id>: an OpenAI- or Anthropic-compatible
// endpoint. The key is read from the variable APIKeyEnv names, else APIKey.
type CustomProfile struct {
	APIMode   string `yaml:"api_mode" json:"api_mode"` // openai-chat | anthropic-messages
	BaseURL   string `yaml:"base_url" json:"base_url"`
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	APIKey    string `yaml:"api_key" json:"-"` // never marshalled to JSON
	// ContextWindow and MaxOutputTokens override the model family's limits
	// (0: the family's); Tokenizer names the encoding that counts for the
	// endpoint's models (o200k_base, cl100k_base or estimate; "": the
	// family's).
	ContextWindow   int    `yaml:"context_window" json:"context_window,omitempty"`
	MaxOutputTokens int    `yaml:"max_output_tokens" json:"max_output_tokens,omitempty"`
	Tokenizer       string `yaml:"tokenizer" json:"tokenizer,omitempty"`
}

// Validate checks the whole section: builtin overrides name builtin profiles
// and hold usable URLs; custom profiles have a known api_mode, a usable base
// URL and an id that no builtin profile owns; default names a known profile.
// Errors are ECONFIG and name the key (providers.custom.<id>.api_mode …).
func (c Config) Validate() error {
	for _, id := range slices.Sorted(maps.Keys(c.Builtin)) {
		if !IsBuiltin(id) {
			return demiurge.Errorf(demiurge.ECONFIG, "providers.builtin.%s: not a builtin profile (known: %s)", id, strings.Join(BuiltinIDs()[1:], ", "))
		}
		if b := c.Builtin[id].BaseURL; b != "" {
			if _, err := validBaseURL(id, b); err != nil {
				return demiurge.Errorf(demiurge.ECONFIG, "providers.builtin.%s.base_url: %s", id, urlProblem(b))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Custom)) {
		if err := validateCustom(id, c.Custom[id]); err != nil {
			return err
		}
	}
	if d := strings.TrimSpace(c.Default); d != "" && !isAuto(d) {
		if _, _, err := c.lookup(NormalizeID(d)); err != nil {
			return demiurge.Errorf(demiurge.ECONFIG, "providers.default: %s", demiurge.ErrorMessage(err))
		}
	}
	return nil
}

func validateCustom(id string, p CustomProfile) error {
	if id == FakeID || isAuto(id) {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s: %q is reserved", id, id)
	}
	if IsBuiltin(id) {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s: %q is a builtin profile; set providers.builtin.%s.base_url to change its URL", id, id, id)
	}
	if p.APIMode != ModeOpenAIChat && p.APIMode != ModeAnthropicMessages {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s.api_mode: unknown api_mode %q (want %s or %s)", id, p.APIMode, ModeOpenAIChat, ModeAnthropicMessages)
	}
	if strings.TrimSpace(p.BaseURL) == "" {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s.base_url: required", id)
	}
	if _, err := validBaseURL(id, p.BaseURL); err != nil {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s.base_url: %s", id, urlProblem(p.BaseURL))
	}
	if p.ContextWindow < 0 || (p.ContextWindow > 0 && p.ContextWindow < MinContextWindow) {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s.context_window: %d is below the minimal context of %d tokens", id, p.ContextWindow, MinContextWindow)
	}
	if p.MaxOutputTokens < 0 || (p.ContextWindow > 0 && p.MaxOutputTokens >= p.ContextWindow) {
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s.max_output_tokens: %d must be positive and below the context window", id, p.MaxOutputTokens)
	}
	switch p.Tokenizer {
	case "", tokens.O200k, tokens.Cl100k, tokens.Estimate:
	default:
		return demiurge.Errorf(demiurge.ECONFIG, "providers.custom.%s.tokenizer: unknown tokenizer %q (want %s, %s or %s)", id, p.Tokenizer, tokens.O200k, tokens.Cl100k, tokens.Estimate)
	}
	return nil
}

// lookup finds id among the fake, builtin and custom profiles. An unknown id
// is EINVALID "unknown provider profile: <id>".
func (c Config) lookup(id string) (builtin *profile, custom *CustomProfile, err error) {
	if id == FakeID {
		return nil, nil, nil
	}
	if p, ok := builtinProfile(id); ok {
		if _, clash := c.Custom[id]; clash {
			return nil, nil, validateCustom(id, c.Custom[id])
		}
		return &p, nil, nil
	}
	if p, ok := c.Custom[id]; ok {
		if err := validateCustom(id, p); err != nil {
			return nil, nil, err
		}
		return nil, &p, nil
	}
	return nil, nil, demiurge.Errorf(demiurge.EINVALID, "unknown provider profile: %s (known: %s)", id, strings.Join(c.KnownIDs(), ", "))
}

// urlProblem describes a bad base URL without quoting its user info.
func urlProblem(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "not a URL (want an absolute http or https URL)"
	}
	return fmt.Sprintf("%q is not an absolute http or https URL", u.Redacted())
}

func isAuto(id string) bool { return strings.EqualFold(strings.TrimSpace(id), "auto") }

// KnownIDs returns every profile id a reference may name: fake, the
// builtin profiles and the custom ones, sorted.
func (c Config) KnownIDs() []string {
	ids := BuiltinIDs()
	for id := range c.Custom {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
