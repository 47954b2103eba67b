package provider

import (
	"cmp"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
)

// ResolveInput is everything that decides which provider a turn talks to.
type ResolveInput struct {
	Flag, Model                     string // --provider, --model
	CoreProvider, CoreModel         string // the core's model.provider, model.model_name
	FallbackProvider, FallbackModel string // the global fallback core's model section
	Config                          Config // config.yaml providers:
	// CoreModelOptions and FallbackModelOptions are model.model_options of
	// the core and of the global fallback (the core's win per key). They
	// are checked against the profile's protocol and sent with every
	// request (max_tokens as the output limit).
	CoreModelOptions, FallbackModelOptions map[string]any
	Getenv                                 func(string) string
	// FakeScript is the --fake-script path; "" means no script.
	FakeScript string
	// Fakes are the scripted fakes this resolution shares with others (nil:
	// none, the script starts afresh).
	Fakes *Fakes
	// HTTPClient, when not nil, replaces Options.HTTPClient.
	HTTPClient *http.Client
	// Options tune timeouts and retries of the HTTP providers.
	Options Options
}

// Resolved describes the provider Resolve chose, for status output and
// session rows. BaseURL never carries a password.
type Resolved struct {
	ID      string
	APIMode string // openai-chat | anthropic-messages | fake
	Model   string
	BaseURL string
	// Limits are the model's context window, output limit and tokenizer.
	Limits demiurge.ModelLimits
}

// Resolve picks the provider and model:
//
//	id    = Flag > CoreProvider > FallbackProvider > Config.Default > "fake"
//	        ("" and "auto" skipped)
//	model = Model > CoreModel > FallbackModel > the profile's default
//
// A builtin profile's base URL is its environment variable (OPENAI_BASE_URL,
// ANTHROPIC_BASE_URL) > providers.builtin.<id>.base_url > the vendor URL; its
// key is the first of its variables that is set. A custom profile's key is
// the variable api_key_env names, else api_key.
//
// Every Resolve with the same Fakes and FakeScript returns the same *Fake,
// so the script is consumed in order across turns and cores.
//
// Errors: EINVALID "unknown provider profile: <id>"; ECONFIG for a missing
// key ("provider openai: API key missing; set OPENAI_API_KEY"), a bad URL,
// api_mode or fake script, or a profile without a model.
func Resolve(in ResolveInput) (demiurge.Provider, Resolved, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	id := cmp.Or(NormalizeID(first(in.Flag, in.CoreProvider, in.FallbackProvider, in.Config.Default)), FakeID)
	model := cmp.Or(strings.TrimSpace(in.Model), strings.TrimSpace(in.CoreModel), strings.TrimSpace(in.FallbackModel))

	builtin, custom, err := in.Config.lookup(id)
	if err != nil {
		return nil, Resolved{}, err
	}
	if builtin == nil && custom == nil {
		model = cmp.Or(model, FakeModel)
		f, err := in.Fakes.fakeFor(in.FakeScript)
		if err != nil {
			return nil, Resolved{}, err
		}
		return f, Resolved{ID: FakeID, APIMode: ModeFake, Model: model, Limits: limitsOf(FakeModel, nil)}, nil
	}

	var (
		mode, base string
		key        string
		ep         = Endpoint{Name: id, Options: in.Options}
	)
	if in.HTTPClient != nil {
		ep.Options.HTTPClient = in.HTTPClient
	}
	if builtin != nil {
		mode, base = builtin.mode, builtin.baseURL
		if o := in.Config.Builtin[id]; strings.TrimSpace(o.BaseURL) != "" {
			base = o.BaseURL
		}
		if builtin.baseURLEnv != "" {
			if v := strings.TrimSpace(getenv(builtin.baseURLEnv)); v != "" {
				base = v
			}
		}
		for _, env := range builtin.keyEnv {
			if key = strings.TrimSpace(getenv(env)); key != "" {
				ep.BearerAuth = slices.Contains(builtin.bearerEnv, env)
				break
			}
		}
		if key == "" {
			return nil, Resolved{}, demiurge.Errorf(demiurge.ECONFIG, "provider %s: API key missing; set %s", id, strings.Join(builtin.keyEnv, " or "))
		}
		model = cmp.Or(model, builtin.model)
		if model == "" {
			return nil, Resolved{}, demiurge.Errorf(demiurge.ECONFIG, "provider %s: no model configured; pass --model or set model.model_name in agent.yaml (`demiurge setup model set`)", id)
		}
		ep.Headers, ep.ExtraBody, ep.OutputLimitField = builtin.headers, builtin.extraBody, builtin.outputField
		ep.Options.MaxTokens = builtin.maxTokens
	} else {
		mode, base = custom.APIMode, custom.BaseURL
		if custom.APIKeyEnv != "" {
			key = strings.TrimSpace(getenv(custom.APIKeyEnv))
		}
		key = cmp.Or(key, strings.TrimSpace(custom.APIKey))
		if key == "" {
			hint := "providers.custom." + id + ".api_key_env (or api_key) in config.yaml"
			if custom.APIKeyEnv != "" {
				hint = custom.APIKeyEnv
			}
			return nil, Resolved{}, demiurge.Errorf(demiurge.ECONFIG, "provider %s: API key missing; set %s", id, hint)
		}
		if model == "" {
			return nil, Resolved{}, demiurge.Errorf(demiurge.ECONFIG, "provider %s: no model configured; pass --model or set model.model_name in agent.yaml", id)
		}
	}
	if _, err := validBaseURL(id, base); err != nil {
		return nil, Resolved{}, err
	}
	ep.BaseURL, ep.APIKey = base, demiurge.NewSecret(key)
	params, err := modelParamsFor(mode, mergeOptions(in.FallbackModelOptions, in.CoreModelOptions))
	if err != nil {
		return nil, Resolved{}, err
	}
	ep.ExtraBody = withBody(ep.ExtraBody, params.body)
	limits := limitsOf(model, custom)
	if n := cmp.Or(params.maxTokens, ep.Options.MaxTokens); n > 0 {
		// The output limit the turn reserves and sends as max_tokens.
		ep.Options.MaxTokens = n
		limits.MaxOutputTokens = min(n, limits.ContextWindow-MinContextWindow/2)
	}

	var p demiurge.Provider
	switch mode {
	case ModeOpenAIChat:
		p, err = NewOpenAI(ep)
	case ModeAnthropicMessages:
		p, err = NewAnthropic(ep)
	}
	if err != nil {
		return nil, Resolved{}, err
	}
	return p, Resolved{ID: id, APIMode: mode, Model: model, BaseURL: shownURL(base), Limits: limits}, nil
}

// first returns the first id that is neither empty nor "auto".
func first(ids ...string) string {
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" && !isAuto(id) {
			return id
		}
	}
	return ""
}

// shownURL is base without user info and trailing slashes.
func shownURL(base string) string {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return ""
	}
	u.User = nil
	return strings.TrimRight(u.String(), "/")
}

// Fakes holds one *Fake per script path. A Host keeps one for its life:
// its script is a process-wide sequence (the CLI contract), however many times a
// provider is resolved. The zero value is ready to use.
type Fakes struct {
	mu     sync.Mutex // guards byPath
	byPath map[string]*Fake
}

// fakeFor returns the Fake of script ("" = no script: a fresh, stateless
// Fake), the one cached in c when c is not nil. A script that fails to
// load is not cached.
func (c *Fakes) fakeFor(script string) (*Fake, error) {
	if strings.TrimSpace(script) == "" {
		return NewFake(nil), nil
	}
	if c == nil {
		items, err := LoadFakeScript(script)
		if err != nil {
			return nil, err
		}
		return NewFake(items), nil
	}
	key, err := filepath.Abs(script)
	if err != nil {
		key = filepath.Clean(script)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.byPath[key]; ok {
		return f, nil
	}
	items, err := LoadFakeScript(script)
	if err != nil {
		return nil, err
	}
	if c.byPath == nil {
		c.byPath = map[string]*Fake{}
	}
	f := NewFake(items)
	c.byPath[key] = f
	return f, nil
}
