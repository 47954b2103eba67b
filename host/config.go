package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/demiurge/demiurge/provider"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/store"
)

// Config is config.yaml of the runtime home. Unknown keys are rejected.
type Config struct {
	Runtime   RuntimeConfig   `yaml:"runtime"`
	Channel   ChannelConfig   `yaml:"channel"`
	UI        UIConfig        `yaml:"ui"`
	Debug     DebugConfig     `yaml:"debug"`
	Providers provider.Config `yaml:"providers"`
	Sandbox   SandboxConfig   `yaml:"sandbox"`
	Limits    LimitsConfig    `yaml:"limits"`
}

// SandboxConfig is the sandbox section: how terminal commands and MCP
// stdio servers are confined. Only the operator's config.yaml sets it.
type SandboxConfig struct {
	Mode string `yaml:"mode"`
	// Network is on or off; YAML 1.1 booleans are taken too.
	Network any `yaml:"network"`

	settings sandbox.Settings
}

// Settings are the validated settings.
func (c SandboxConfig) Settings() sandbox.Settings { return c.settings }

// RuntimeConfig is the runtime section.
type RuntimeConfig struct {
	DefaultCore string `yaml:"default_core"`
	Timezone    string `yaml:"timezone"`
	// Python is the interpreter of module.py slots and tools: a name on
	// the Host's PATH or a path ("" is python3).
	Python string `yaml:"python"`
	// Database is the postgres:// URL of a PostgreSQL ledger shared by
	// several Hosts; "" keeps the SQLite file of the home. The
	// DEMIURGE_DATABASE_URL environment variable overrides it (Database).
	Database string `yaml:"database"`
	// MaxActiveTasks bounds the background tasks one Host runs at once;
	// past it a task waits in the ledger's queue, and a scheduled run may
	// be taken by another Host of the ledger. 0: no bound.
	MaxActiveTasks int `yaml:"max_active_tasks"`
}

// ChannelConfig is the channel section.
type ChannelConfig struct {
	BusyMode string `yaml:"busy_mode"`
}

// UIConfig is the ui section.
type UIConfig struct {
	UserMessageAlign   string `yaml:"user_message_align"`
	DemiurgeThemeColor string `yaml:"demiurge_theme_color"`
	UserThemeColor     string `yaml:"user_theme_color"`
}

// DebugConfig is the debug section.
type DebugConfig struct {
	ShowSystemPrompt bool `yaml:"show_system_prompt"`
}

const defaultConfigYAML = `# Demiurge runtime configuration.
runtime:
  default_core: assistant
  timezone: null
channel:
  busy_mode: interrupt
ui:
  user_message_align: left
  demiurge_theme_color: "#ff9afc"
  user_theme_color: "#9cc9ff"
debug:
  show_system_prompt: false
sandbox:
  mode: workspace-write   # or off: run terminal commands and MCP servers unconfined
  network: "on"           # "off": no network at all for them, loopback included
providers:
  # default: openai        # used when neither --provider nor the core names one
  # custom:
  #   local:
  #     api_mode: openai-chat
  #     base_url: http://127.0.0.1:8000/v1
  #     api_key_env: LOCAL_API_KEY
`

var hexColor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`) })

// LoadConfig reads and validates path. A missing file is the default config.
func LoadConfig(path string) (Config, error) {
	cfg := Config{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte(defaultConfigYAML)
	} else if err != nil {
		return cfg, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	if err := yamlx.DecodeStrict(path, data, &cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate(path)
}

func (c *Config) validate(path string) error {
	bad := func(field, want, got string) error {
		return demiurge.Errorf(demiurge.ECONFIG, "%s: %s must be %s, got %q", path, field, want, got)
	}
	if c.Runtime.DefaultCore == "" {
		c.Runtime.DefaultCore = "assistant"
	}
	if c.Runtime.Database != "" && !store.IsDatabaseURL(c.Runtime.Database) {
		// Not the value: a URL may hold a password.
		return demiurge.Errorf(demiurge.ECONFIG, "%s: runtime.database must be a postgres:// URL", path)
	}
	if c.Runtime.MaxActiveTasks < 0 {
		return bad("runtime.max_active_tasks", "a number of tasks, 0 or more", strconv.Itoa(c.Runtime.MaxActiveTasks))
	}
	switch c.Channel.BusyMode {
	case "":
		c.Channel.BusyMode = "interrupt"
	case "interrupt", "queue":
	default:
		return bad("channel.busy_mode", "interrupt or queue", c.Channel.BusyMode)
	}
	switch c.UI.UserMessageAlign {
	case "", "left", "right":
	default:
		return bad("ui.user_message_align", "left or right", c.UI.UserMessageAlign)
	}
	for field, v := range map[string]*string{"ui.demiurge_theme_color": &c.UI.DemiurgeThemeColor, "ui.user_theme_color": &c.UI.UserThemeColor} {
		if *v == "" {
			continue
		}
		if !hexColor().MatchString(*v) {
			return bad(field, "a 3- or 6-digit hex color", *v)
		}
		h := strings.TrimPrefix(*v, "#")
		if len(h) == 3 {
			h = fmt.Sprintf("%c%c%c%c%c%c", h[0], h[0], h[1], h[1], h[2], h[2])
		}
		*v = "#" + strings.ToLower(h)
	}
	mode, err := sandbox.ParseMode(c.Sandbox.Mode)
	if err != nil {
		return bad("sandbox.mode", "workspace-write or off", c.Sandbox.Mode)
	}
	network := ""
	switch v := c.Sandbox.Network.(type) {
	case nil:
	case string:
		network = v
	case bool:
		network = map[bool]string{true: "on", false: "off"}[v]
	default:
		return bad("sandbox.network", "on or off", fmt.Sprint(v))
	}
	off, err := sandbox.ParseNetwork(network)
	if err != nil {
		return bad("sandbox.network", "on or off", network)
	}
	c.Sandbox.settings = sandbox.Settings{Mode: mode, NoNetwork: off}
	return c.Limits.validate(path)
}
