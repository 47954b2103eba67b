package host

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/internal/atomicfile"
	"github.com/demiurge/demiurge/internal/envfile"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/demiurge/demiurge/provider"
	"github.com/demiurge/demiurge/schedule"
)

// Setup reads and edits what `demiurge setup` manages (spec surfaces
// §5.4): the providers and the runtime timezone of config.yaml, the
// secrets of the home's .env, and a core's model section. It does not open
// the Host. Every write is atomic (a temporary file and a rename): a setup
// killed halfway leaves each file as it was or fully written. Secrets are
// written only to .env, and no method returns one: profiles name the
// variable a key comes from, never its value.
//
// A Setup is used by one goroutine at a time.
type Setup struct {
	home Home
	// explicit reads the explicit environment; getenv reads it first and
	// .env second.
	explicit, getenv func(string) string
	env              *envfile.File
	// HTTPClient sends the request of TestProvider (nil: the default).
	HTTPClient *http.Client
	// Now is the clock of the status's local time and of test latencies.
	Now func() time.Time
}

// NewSetup returns the setup of the home dir. explicit reads the explicit
// environment (nil: os.Getenv); env is the home's .env as the caller
// loaded it (nil: none), read under it.
func NewSetup(dir string, explicit func(string) string, env *envfile.File) (*Setup, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "runtime home %q is not usable", dir)
	}
	if explicit == nil {
		explicit = os.Getenv
	}
	return &Setup{home: Home{Dir: abs}, explicit: explicit, getenv: envfile.Layer(explicit, env), env: env, Now: time.Now}, nil
}

// Home is the runtime home the setup edits.
func (s *Setup) Home() Home { return s.home }

// EnvPath is the home's private .env.
func (h Home) EnvPath() string { return filepath.Join(h.Dir, ".env") }

// profileID is the shape of a provider profile id (spec surfaces §5.1).
var profileID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`) })

// ProviderView is one provider profile as setup reports it.
type ProviderView struct {
	Type           string   `json:"type"` // builtin | custom
	Display        string   `json:"display,omitempty"`
	APIMode        string   `json:"api_mode"`
	APIModeSource  string   `json:"api_mode_source"`
	BaseURL        string   `json:"base_url"`
	BaseURLSource  string   `json:"base_url_source"`
	APIKeyEnv      string   `json:"api_key_env"`
	APIKeyEnvAlts  []string `json:"api_key_env_alternates,omitempty"`
	APIKey         *string  `json:"api_key"` // "<redacted>" for an inline key, else null
	APIKeySource   string   `json:"api_key_source"`
	KeyAvailable   bool     `json:"key_available"`
	SuggestedModel string   `json:"suggested_model,omitempty"`
	Configured     bool     `json:"configured"` // named in config.yaml
}

// SetupStatus is `setup status`.
type SetupStatus struct {
	Home             string                  `json:"home"`
	HostConfig       string                  `json:"host_config"`
	EnvFile          string                  `json:"env_file"`
	EnvFileKeys      []string                `json:"env_file_keys"`
	DefaultProvider  *string                 `json:"default_provider"`
	Timezone         string                  `json:"runtime_timezone"`
	TimezoneSource   string                  `json:"runtime_timezone_source"`
	TimezoneExplicit bool                    `json:"runtime_timezone_explicit"`
	LocalNow         string                  `json:"runtime_local_now"`
	Providers        map[string]ProviderView `json:"providers"`
	CoreModel        CoreModelView           `json:"core_model"`
}

// CoreModelView is the provider and model a core's turns would use.
type CoreModelView struct {
	Core           string `json:"core"`
	Path           string `json:"path"`
	Provider       string `json:"provider"`
	ProviderSource string `json:"provider_source"`
	APIMode        string `json:"provider_api_mode"`
	Model          string `json:"model"`
	ModelSource    string `json:"model_source"`
}

// readConfig reads config.yaml (the default one when missing) and its
// bytes.
func (s *Setup) readConfig() (Config, []byte, error) {
	path := s.home.ConfigPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte(defaultConfigYAML)
	} else if err != nil {
		return Config{}, nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	cfg, err := parseConfig(path, data)
	return cfg, data, err
}

// parseConfig decodes and validates config.yaml's bytes, providers
// included.
func parseConfig(path string, data []byte) (Config, error) {
	var cfg Config
	if err := yamlx.DecodeStrict(path, data, &cfg); err != nil {
		return cfg, err
	}
	if err := cfg.validate(path); err != nil {
		return cfg, err
	}
	if err := cfg.Providers.Validate(); err != nil {
		return cfg, demiurge.WrapError(demiurge.ECONFIG, err, "%s: %s", path, demiurge.ErrorMessage(err))
	}
	return cfg, nil
}

// prepare creates what is missing of the home (directories 0700, the
// default files), as every setup command but status does first.
func (s *Setup) prepare() error {
	_, err := Init(s.home.Dir, "")
	return err
}

// editConfig applies edit to config.yaml and writes it atomically, after
// checking that the result is a valid config.
func (s *Setup) editConfig(edit func(e *yamlEdit, cfg Config) error) (Config, error) {
	if err := s.prepare(); err != nil {
		return Config{}, err
	}
	cfg, data, err := s.readConfig()
	if err != nil {
		return cfg, err
	}
	path := s.home.ConfigPath()
	e, err := openYAMLEdit(path, data)
	if err != nil {
		return cfg, err
	}
	if err := edit(e, cfg); err != nil {
		return cfg, err
	}
	out, err := e.bytes()
	if err != nil {
		return cfg, err
	}
	next, err := parseConfig(path, out)
	if err != nil {
		return cfg, err
	}
	if err := atomicfile.Write(path, out); err != nil {
		return cfg, demiurge.WrapError(demiurge.ECONFIG, err, "write %s: %s", path, demiurge.IOReason(err))
	}
	return next, nil
}

// WriteEnv sets key to value in the home's .env (0600), keeping every
// other line and comment, atomically. A .env that is a symbolic link or
// readable by others is refused, as on reading.
func (s *Setup) WriteEnv(key, value string) error {
	if !envfile.ValidKey(key) {
		return demiurge.Errorf(demiurge.EINVALID, "invalid variable name %q", key)
	}
	if strings.TrimSpace(value) == "" {
		return demiurge.Errorf(demiurge.EINVALID, "the value of %s is empty", key)
	}
	if err := s.prepare(); err != nil {
		return err
	}
	path := s.home.EnvPath()
	var data []byte
	if st, err := os.Lstat(path); err == nil {
		if err := envfile.CheckMode(path, st); err != nil {
			return err
		}
		if data, err = os.ReadFile(path); err != nil {
			return demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	if err := atomicfile.Write(path, envfile.Upsert(data, key, value)); err != nil {
		return demiurge.WrapError(demiurge.ECONFIG, err, "write %s: %s", path, demiurge.IOReason(err))
	}
	// Later reads of this Setup see the new value (the explicit
	// environment still wins).
	if s.env == nil {
		s.env = &envfile.File{Path: path, Values: map[string]string{}}
		s.getenv = envfile.Layer(s.explicit, s.env)
	}
	s.env.Exists, s.env.Values[key] = true, value
	return nil
}

// Status reports the home's provider settings for coreID ("": the
// default core). It creates nothing.
func (s *Setup) Status(ctx context.Context, coreID string, timezoneFlag string) (*SetupStatus, error) {
	cfg, _, err := s.readConfig()
	if err != nil {
		return nil, err
	}
	st := &SetupStatus{Home: s.home.Dir, HostConfig: s.home.ConfigPath(), EnvFile: s.home.EnvPath(), EnvFileKeys: s.env.Keys(), Providers: s.Providers(cfg)}
	if st.EnvFileKeys == nil {
		st.EnvFileKeys = []string{}
	}
	if d := strings.TrimSpace(cfg.Providers.Default); d != "" {
		st.DefaultProvider = &d
	}
	tz, err := schedule.ResolveTimezone(timezoneFlag, s.getenv(schedule.TimezoneEnv), cfg.Runtime.Timezone)
	if err != nil {
		return nil, err
	}
	st.Timezone, st.TimezoneSource, st.TimezoneExplicit = tz.Name, tz.Source, tz.Explicit
	st.LocalNow = s.Now().In(tz.Location).Format(time.RFC3339)
	st.CoreModel, err = s.coreModel(cfg, cmp.Or(coreID, cfg.Runtime.DefaultCore))
	return st, err
}

// coreModel is the provider and model a turn of coreID would resolve, by
// the rules and labels of provider.ResolveSources.
func (s *Setup) coreModel(cfg Config, coreID string) (CoreModelView, error) {
	v := CoreModelView{Core: coreID, Path: filepath.Join(s.home.CoreDir(coreID), "agent.yaml")}
	var coreModel, fallback core.ModelConfig
	// A core that does not load reports the fallback's choice; `doctor`
	// says why it does not load.
	if c, err := core.Load(s.home.CoreDir(coreID)); err == nil {
		coreModel = c.Manifest.Model
	}
	if g, err := core.LoadGlobal(filepath.Join(s.home.AgentsDir(), "agent.yaml")); err == nil {
		fallback = g.Model
	}
	in := provider.ResolveInput{CoreProvider: coreModel.Provider, CoreModel: coreModel.ModelName,
		FallbackProvider: fallback.Provider, FallbackModel: fallback.ModelName, Config: cfg.Providers, Getenv: s.getenv}
	src := provider.ResolveSources(in)
	labels := map[string]string{"core": "agent.yaml:model.provider", "fallback": "agents/agent.yaml:model.provider", "config": "config.yaml:providers.default", "default": "default", "cli": "cli"}
	v.ProviderSource = labels[src.Provider]
	v.Provider = provider.FakeID
	for _, id := range []string{coreModel.Provider, fallback.Provider, cfg.Providers.Default} {
		if id = strings.TrimSpace(id); id != "" && !strings.EqualFold(id, "auto") {
			v.Provider = provider.NormalizeID(id)
			break
		}
	}
	v.APIMode = provider.ModeFake
	if p, ok := provider.LookupPreset(v.Provider); ok {
		v.APIMode = p.APIMode
		v.Model = p.Model
	} else if c, ok := cfg.Providers.Custom[v.Provider]; ok {
		v.APIMode = c.APIMode
	}
	modelLabels := map[string]string{"core": "agent.yaml:model.model_name", "fallback": "agents/agent.yaml:model.model_name", "profile": "profile"}
	v.ModelSource = modelLabels[src.Model]
	switch {
	case strings.TrimSpace(coreModel.ModelName) != "":
		v.Model = strings.TrimSpace(coreModel.ModelName)
	case strings.TrimSpace(fallback.ModelName) != "":
		v.Model = strings.TrimSpace(fallback.ModelName)
	case v.Provider == provider.FakeID:
		v.Model = provider.FakeModel
	}
	return v, nil
}

// Providers lists every profile: the builtin ones in the spec's table
// order, then the custom ones (a JSON object sorts them anyway).
func (s *Setup) Providers(cfg Config) map[string]ProviderView {
	out := map[string]ProviderView{}
	for _, p := range provider.Presets() {
		out[p.ID] = s.builtinView(cfg, p)
	}
	for id, c := range cfg.Providers.Custom {
		out[id] = s.customView(id, c)
	}
	return out
}

// ProviderIDs returns the ids setup offers, sorted.
func ProviderIDs(cfg Config) []string {
	ids := slices.Collect(maps.Keys(cfg.Providers.Custom))
	for _, p := range provider.Presets() {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return ids
}

func (s *Setup) builtinView(cfg Config, p provider.Preset) ProviderView {
	v := ProviderView{Type: "builtin", Display: p.Display, APIMode: p.APIMode, APIModeSource: "builtin",
		BaseURL: p.BaseURL, BaseURLSource: "builtin", APIKeyEnv: p.KeyEnv[0], APIKeyEnvAlts: p.KeyEnv[1:], SuggestedModel: p.Model}
	if o, ok := cfg.Providers.Builtin[p.ID]; ok {
		v.Configured = true
		if b := strings.TrimSpace(o.BaseURL); b != "" {
			v.BaseURL, v.BaseURLSource = strings.TrimRight(b, "/"), "config.yaml:providers.builtin."+p.ID+".base_url"
		}
	}
	if p.BaseURLEnv != "" {
		if b := strings.TrimSpace(s.getenv(p.BaseURLEnv)); b != "" {
			v.BaseURL, v.BaseURLSource = strings.TrimRight(b, "/"), "env:"+p.BaseURLEnv
		}
	}
	v.APIKeySource = "env:" + p.KeyEnv[0] + " (missing)"
	for _, name := range p.KeyEnv {
		if strings.TrimSpace(s.getenv(name)) != "" {
			v.APIKeySource, v.KeyAvailable = s.envSource(name), true
			break
		}
	}
	return v
}

func (s *Setup) customView(id string, c provider.CustomProfile) ProviderView {
	v := ProviderView{Type: "custom", Configured: true, APIMode: cmp.Or(c.APIMode, provider.ModeOpenAIChat),
		APIModeSource: "config.yaml:providers.custom." + id + ".api_mode",
		BaseURL:       strings.TrimRight(c.BaseURL, "/"), BaseURLSource: "config.yaml:providers.custom." + id + ".base_url",
		APIKeyEnv: c.APIKeyEnv, APIKeySource: "not configured"}
	if c.APIKeyEnv != "" {
		v.APIKeySource = "env:" + c.APIKeyEnv + " (missing)"
		if strings.TrimSpace(s.getenv(c.APIKeyEnv)) != "" {
			v.APIKeySource, v.KeyAvailable = s.envSource(c.APIKeyEnv), true
		}
	}
	if strings.TrimSpace(c.APIKey) != "" {
		red := "<redacted>"
		v.APIKey = &red
		if !v.KeyAvailable {
			v.APIKeySource, v.KeyAvailable = "config.yaml:providers.custom."+id+".api_key", true
		}
	}
	return v
}

// envSource labels a variable that is set: "env:<NAME>" when the explicit
// environment sets it, "env:<NAME> (.env)" when the home's .env does.
func (s *Setup) envSource(name string) string {
	if strings.TrimSpace(s.explicit(name)) == "" {
		if _, ok := s.env.Lookup(name); ok {
			return "env:" + name + " (.env)"
		}
	}
	return "env:" + name
}

// ProviderListing is `setup providers list`.
type ProviderListing struct {
	Providers       map[string]ProviderView `json:"providers"`
	DefaultProvider *string                 `json:"default_provider"`
}

// ListProviders reports every profile and the default.
func (s *Setup) ListProviders() (*ProviderListing, error) {
	cfg, _, err := s.readConfig()
	if err != nil {
		return nil, err
	}
	out := &ProviderListing{Providers: s.Providers(cfg)}
	if d := strings.TrimSpace(cfg.Providers.Default); d != "" {
		out.DefaultProvider = &d
	}
	return out, nil
}

// ShowProvider reports one profile. An unknown id is EINVALID and lists
// the known ones.
func (s *Setup) ShowProvider(id string) (string, ProviderView, error) {
	cfg, _, err := s.readConfig()
	if err != nil {
		return "", ProviderView{}, err
	}
	id = provider.NormalizeID(id)
	v, ok := s.Providers(cfg)[id]
	if !ok {
		return id, v, unknownProvider(id, cfg)
	}
	return id, v, nil
}

func unknownProvider(id string, cfg Config) error {
	return demiurge.Errorf(demiurge.EINVALID, "unknown provider profile: %s (known: %s)", id, strings.Join(append([]string{provider.FakeID}, ProviderIDs(cfg)...), ", "))
}

// ProviderEdit is the flags of `setup providers add|edit`.
type ProviderEdit struct {
	Preset     string
	APIMode    string
	BaseURL    string
	APIKeyEnv  string
	APIKey     string
	WriteEnv   bool
	SetDefault bool
	// Edit is true for `edit`: the profile must exist, and what is not
	// given keeps its value.
	Edit bool
}

// ProviderChange is the result of add, edit and set-default.
type ProviderChange struct {
	Provider string       `json:"provider"`
	Profile  ProviderView `json:"profile"`
	Default  *string      `json:"default"`
	// EnvWritten names the .env variable the key was written to.
	EnvWritten string `json:"env_written,omitempty"`
}

// SaveProvider adds or edits a profile (spec surfaces §5.4). A builtin
// profile keeps only a base_url override; a custom one needs a base URL.
// A key is written only to .env (with WriteEnv), under the builtin's own
// variable or the custom profile's api_key_env (default
// <ID>_API_KEY), and never into config.yaml.
func (s *Setup) SaveProvider(rawID string, ed ProviderEdit) (*ProviderChange, error) {
	id := provider.NormalizeID(rawID)
	if id == "" || id == "auto" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "provider profile id must not be empty or auto")
	}
	if id == provider.FakeID {
		return nil, demiurge.Errorf(demiurge.EINVALID, "custom provider id cannot shadow builtin provider: fake")
	}
	if !profileID().MatchString(id) {
		return nil, demiurge.Errorf(demiurge.EINVALID, "invalid provider profile id: %s (lower-case letters, digits and -, starting with a letter)", id)
	}
	if ed.APIKey != "" && !ed.WriteEnv {
		return nil, demiurge.Errorf(demiurge.EINVALID, "--api-key requires --write-env: keys are written only to the home's .env")
	}
	preset, builtin := provider.LookupPreset(id)
	var keyEnv string
	cfg, err := s.editConfig(func(e *yamlEdit, cfg Config) error {
		if builtin {
			switch {
			case ed.Preset != "" && provider.NormalizeID(ed.Preset) != id:
				return demiurge.Errorf(demiurge.EINVALID, "--preset must match the builtin provider id")
			case ed.APIMode != "":
				return demiurge.Errorf(demiurge.EINVALID, "--api-mode is only supported for custom provider profiles")
			case ed.APIKeyEnv != "":
				return demiurge.Errorf(demiurge.EINVALID, "--api-key-env is only supported for custom provider profiles")
			}
			keyEnv = preset.KeyEnv[0]
			if b := strings.TrimSpace(ed.BaseURL); b != "" {
				e.set(strings.TrimRight(b, "/"), "providers", "builtin", id, "base_url")
			} else if !ed.Edit {
				e.remove("providers", "builtin", id)
			}
		} else {
			if ed.Preset != "" {
				return demiurge.Errorf(demiurge.EINVALID, "--preset must be a builtin provider id (known: %s)", strings.Join(provider.BuiltinIDs()[1:], ", "))
			}
			old, exists := cfg.Providers.Custom[id]
			if ed.Edit && !exists {
				return demiurge.Errorf(demiurge.EINVALID, "provider profile not found: %s (known: %s)", id, strings.Join(ProviderIDs(cfg), ", "))
			}
			base := cmp.Or(strings.TrimSpace(ed.BaseURL), old.BaseURL)
			if base == "" {
				return demiurge.Errorf(demiurge.EINVALID, "--base-url is required for custom provider profiles")
			}
			mode := cmp.Or(ed.APIMode, old.APIMode, provider.ModeOpenAIChat)
			keyEnv = cmp.Or(ed.APIKeyEnv, old.APIKeyEnv)
			if keyEnv == "" && ed.APIKey != "" {
				keyEnv = DefaultKeyEnv(id)
			}
			if keyEnv != "" && !envfile.ValidKey(keyEnv) {
				return demiurge.Errorf(demiurge.EINVALID, "--api-key-env %q is not a variable name", keyEnv)
			}
			e.set(mode, "providers", "custom", id, "api_mode")
			e.set(strings.TrimRight(base, "/"), "providers", "custom", id, "base_url")
			if keyEnv != "" {
				e.set(keyEnv, "providers", "custom", id, "api_key_env")
			}
		}
		if ed.SetDefault {
			e.set(id, "providers", "default")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &ProviderChange{Provider: id}
	if ed.APIKey != "" {
		if err := s.WriteEnv(keyEnv, ed.APIKey); err != nil {
			return nil, err
		}
		out.EnvWritten = keyEnv
	}
	out.Profile = s.Providers(cfg)[id]
	if d := strings.TrimSpace(cfg.Providers.Default); d != "" {
		out.Default = &d
	}
	return out, nil
}

// DefaultKeyEnv is the key variable setup proposes for a custom profile:
// the id upper-cased, "-" as "_", and "_API_KEY".
func DefaultKeyEnv(id string) string {
	return strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "_API_KEY"
}

// ProviderRemoval is `setup providers remove`.
type ProviderRemoval struct {
	Removed         string  `json:"removed"`
	DefaultProvider *string `json:"default_provider"`
}

// RemoveProvider removes a custom profile or a builtin's override, and the
// default when it named it. Its key stays in .env.
func (s *Setup) RemoveProvider(rawID string) (*ProviderRemoval, error) {
	id := provider.NormalizeID(rawID)
	cfg, err := s.editConfig(func(e *yamlEdit, cfg Config) error {
		_, custom := cfg.Providers.Custom[id]
		_, override := cfg.Providers.Builtin[id]
		if !custom && !override {
			return demiurge.Errorf(demiurge.EINVALID, "provider profile not found: %s (configured: %s)", id, cmp.Or(strings.Join(configuredIDs(cfg), ", "), "none"))
		}
		e.remove("providers", "custom", id)
		e.remove("providers", "builtin", id)
		if provider.NormalizeID(cfg.Providers.Default) == id {
			e.set(nil, "providers", "default")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &ProviderRemoval{Removed: id}
	if d := strings.TrimSpace(cfg.Providers.Default); d != "" {
		out.DefaultProvider = &d
	}
	return out, nil
}

func configuredIDs(cfg Config) []string {
	ids := slices.Collect(maps.Keys(cfg.Providers.Custom))
	ids = append(ids, slices.Collect(maps.Keys(cfg.Providers.Builtin))...)
	slices.Sort(ids)
	return ids
}

// SetDefaultProvider sets providers.default (any known profile, or fake).
func (s *Setup) SetDefaultProvider(rawID string) (*string, error) {
	id := provider.NormalizeID(rawID)
	cfg, err := s.editConfig(func(e *yamlEdit, cfg Config) error {
		if id != provider.FakeID && !provider.IsBuiltin(id) {
			if _, ok := cfg.Providers.Custom[id]; !ok {
				return unknownProvider(id, cfg)
			}
		}
		e.set(id, "providers", "default")
		return nil
	})
	if err != nil {
		return nil, err
	}
	d := cfg.Providers.Default
	return &d, nil
}

// TimezoneChange is `setup timezone set|clear`.
type TimezoneChange struct {
	Timezone string `json:"runtime_timezone"`
	Source   string `json:"runtime_timezone_source"`
}

// SetTimezone stores runtime.timezone ("" clears it) and reports the zone
// now in effect (DEMIURGE_TIMEZONE still wins over config.yaml).
func (s *Setup) SetTimezone(name string) (*TimezoneChange, error) {
	name = strings.TrimSpace(name)
	if name != "" {
		if _, err := schedule.ResolveTimezone(name, "", ""); err != nil {
			return nil, demiurge.Errorf(demiurge.EINVALID, "runtime.timezone must be an IANA timezone string, got %q", name)
		}
	}
	cfg, err := s.editConfig(func(e *yamlEdit, _ Config) error {
		if name == "" {
			e.set(nil, "runtime", "timezone")
		} else {
			e.set(name, "runtime", "timezone")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tz, err := schedule.ResolveTimezone("", s.getenv(schedule.TimezoneEnv), cfg.Runtime.Timezone)
	if err != nil {
		return nil, err
	}
	return &TimezoneChange{Timezone: tz.Name, Source: tz.Source}, nil
}

// ProviderTest is `setup providers test`.
type ProviderTest struct {
	Provider     string `json:"provider"`
	APIMode      string `json:"api_mode"`
	BaseURL      string `json:"base_url"`
	Model        string `json:"model"`
	APIKeySource string `json:"api_key"`
	OK           bool   `json:"ok"`
	LatencyMS    int64  `json:"latency_ms"`
	Response     string `json:"response,omitempty"`
	// Error is the failure in one line, and Kind its class: key (the key
	// was refused), model (the model is unknown), quota (rate limit or
	// quota), endpoint (anything else the server answered), network.
	Error *ProviderTestError `json:"error"`
}

// ProviderTestError is why a provider test failed.
type ProviderTestError struct {
	Kind    string `json:"kind"`
	Status  int    `json:"http_status,omitempty"`
	Message string `json:"message"`
}

// TestProvider sends one minimal request ("Reply with ok.") to a profile
// with model (flag > the profile's suggested model > "provider-test"),
// without retries, and reports the answer or the failure. It fails (an
// error) only when the profile does not resolve: unknown, no key, a bad
// URL. The key never appears in the report.
func (s *Setup) TestProvider(ctx context.Context, rawID, model string) (*ProviderTest, error) {
	cfg, _, err := s.readConfig()
	if err != nil {
		return nil, err
	}
	id := provider.NormalizeID(rawID)
	if id == provider.FakeID {
		model = cmp.Or(model, provider.FakeModel)
	} else if p, ok := provider.LookupPreset(id); ok {
		model = cmp.Or(model, p.Model, "provider-test")
	} else if _, ok := cfg.Providers.Custom[id]; ok {
		model = cmp.Or(model, "provider-test")
	} else {
		return nil, unknownProvider(id, cfg)
	}
	in := provider.ResolveInput{Flag: id, Model: model, Config: cfg.Providers, Getenv: s.getenv, HTTPClient: s.HTTPClient,
		Options: provider.Options{MaxRetries: -1, Timeout: 60 * time.Second}}
	p, res, err := provider.Resolve(in)
	if err != nil {
		return nil, err
	}
	out := &ProviderTest{Provider: id, APIMode: res.APIMode, BaseURL: res.BaseURL, Model: res.Model, APIKeySource: provider.ResolveSources(in).APIKey}
	start := s.Now()
	resp, err := p.Complete(ctx, demiurge.ModelRequest{Model: res.Model, MaxTokens: 16,
		Messages: []demiurge.ModelMessage{{Role: "user", Content: "Reply with ok."}}}, nil)
	out.LatencyMS = s.Now().Sub(start).Milliseconds()
	if err != nil {
		out.Error = classifyTestError(err)
		return out, nil
	}
	out.OK = true
	out.Response = resp.Content
	if r := []rune(out.Response); len(r) > 200 {
		out.Response = string(r[:200])
	}
	return out, nil
}

// classifyTestError names what a failed test request says about the
// setup.
func classifyTestError(err error) *ProviderTestError {
	e := &ProviderTestError{Status: provider.HTTPStatus(err), Message: demiurge.ErrorMessage(err)}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		e.Kind = "key"
	case e.Status == http.StatusNotFound:
		e.Kind = "model"
	case e.Status == http.StatusTooManyRequests || e.Status == http.StatusPaymentRequired:
		e.Kind = "quota"
	case e.Status != 0:
		e.Kind = "endpoint"
	default:
		e.Kind = "network"
	}
	return e
}
