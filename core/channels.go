package core

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/goccy/go-yaml/ast"
)

// Channels is agent.yaml's channels section, keyed by normalised name
// (lower case, '-' becomes '_'). Channels of a known type (telegram,
// webhook, slack, mattermost, matrix, email) are decoded strictly into their
// settings type; channels of any other type keep their fields as a map.
type Channels map[string]Channel

// Channel is one configured channel. All channels are disabled unless
// enabled: true.
type Channel struct {
	Name    string // normalised name
	Type    string // normalised `type`, default the name
	Enabled bool
	// Settings is *TelegramChannel, *WebhookChannel, *SlackChannel,
	// *MattermostChannel, *MatrixChannel or *EmailChannel for a known type,
	// and map[string]any (every field, enabled and type included) otherwise.
	Settings any
}

// ChannelBase holds the keys every channel type accepts.
type ChannelBase struct {
	Enabled bool   `yaml:"enabled"`
	Type    string `yaml:"type"`
	// BusyMode is what a message does to a conversation whose turn is
	// still running: interrupt cancels that turn, queue waits; "" (unset)
	// takes the Host's channel.busy_mode of config.yaml.
	BusyMode string `yaml:"busy_mode"`
}

// Base returns the keys every channel type accepts.
func (b *ChannelBase) Base() *ChannelBase { return b }

// TelegramChannel configures the Telegram long-poll channel.
type TelegramChannel struct {
	ChannelBase          `yaml:",inline"`
	BotTokenEnv          string  `yaml:"bot_token_env"`
	BotToken             string  `yaml:"bot_token"`
	BotUsername          string  `yaml:"bot_username"`
	AllowedUsers         []int64 `yaml:"allowed_users"`
	AllowedChats         []int64 `yaml:"allowed_chats"`
	UnauthorizedResponse string  `yaml:"unauthorized_response"` // silent|brief
	PollTimeout          int     `yaml:"poll_timeout"`
	MessageFormat        string  `yaml:"message_format"` // markdown_v2|plain
	RegisterCommands     bool    `yaml:"register_commands"`
	SendTyping           bool    `yaml:"send_typing"`
	RichMessages         bool    `yaml:"rich_messages"`
	ReplyToMode          string  `yaml:"reply_to_mode"` // off|first|all
	// APIBaseURL is the Bot API server (default https://api.telegram.org).
	APIBaseURL string `yaml:"api_base_url"`
	// MaxAttachmentBytes bounds a file a user sends in a private chat
	// (default and most: MaxTelegramAttachmentBytes).
	MaxAttachmentBytes int64 `yaml:"max_attachment_bytes"`
}

// MaxTelegramAttachmentBytes is the largest max_attachment_bytes: 20 MiB,
// what getFile lets a bot download from the Bot API. (A self-hosted
// server in --local mode allows more, but answers with local paths,
// which the channel does not read.)
const MaxTelegramAttachmentBytes = 20 << 20

// WebhookChannel configures the HTTP webhook channel.
type WebhookChannel struct {
	ChannelBase              `yaml:",inline"`
	Host                     string            `yaml:"host"`
	Port                     int               `yaml:"port"`
	Path                     string            `yaml:"path"`
	TokenEnv                 string            `yaml:"token_env"`
	Token                    string            `yaml:"token"`
	AllowUnauthenticated     bool              `yaml:"allow_unauthenticated"`
	CallbackURLEnv           string            `yaml:"callback_url_env"`
	CallbackURL              string            `yaml:"callback_url"`
	AllowPrivateCallbackURLs bool              `yaml:"allow_private_callback_urls"`
	AllowedSources           []string          `yaml:"allowed_sources"`
	DeliveryTargets          map[string]string `yaml:"delivery_targets"`
	// CallbackSecretEnv / CallbackSecret, when set, sign every outbound
	// callback: X-Demiurge-Signature: sha256=<hex HMAC-SHA256 of the body>.
	CallbackSecretEnv string `yaml:"callback_secret_env"`
	CallbackSecret    string `yaml:"callback_secret"`
}

// SlackChannel configures the Slack Events API channel.
type SlackChannel struct {
	ChannelBase      `yaml:",inline"`
	BotTokenEnv      string   `yaml:"bot_token_env"`
	BotToken         string   `yaml:"bot_token"`
	SigningSecretEnv string   `yaml:"signing_secret_env"`
	SigningSecret    string   `yaml:"signing_secret"`
	Host             string   `yaml:"host"`
	Port             int      `yaml:"port"`
	Path             string   `yaml:"path"`
	BotUserID        string   `yaml:"bot_user_id"`
	AppMentionsOnly  bool     `yaml:"app_mentions_only"`
	AllowedTeams     []string `yaml:"allowed_teams"`
	AllowedChannels  []string `yaml:"allowed_channels"`
	AllowedUsers     []string `yaml:"allowed_users"`
}

// MattermostChannel configures the Mattermost channel.
type MattermostChannel struct {
	ChannelBase           `yaml:",inline"`
	BaseURL               string   `yaml:"base_url"`
	TokenEnv              string   `yaml:"token_env"`
	Token                 string   `yaml:"token"`
	IncomingWebhookURLEnv string   `yaml:"incoming_webhook_url_env"`
	IncomingWebhookURL    string   `yaml:"incoming_webhook_url"`
	WebhookTokenEnv       string   `yaml:"webhook_token_env"`
	WebhookToken          string   `yaml:"webhook_token"`
	Host                  string   `yaml:"host"`
	Port                  int      `yaml:"port"`
	Path                  string   `yaml:"path"`
	AllowedChannels       []string `yaml:"allowed_channels"`
	AllowedUsers          []string `yaml:"allowed_users"`
}

// MatrixChannel configures the Matrix sync-polling channel.
type MatrixChannel struct {
	ChannelBase    `yaml:",inline"`
	HomeserverURL  string   `yaml:"homeserver_url"`
	AccessTokenEnv string   `yaml:"access_token_env"`
	AccessToken    string   `yaml:"access_token"`
	UserID         string   `yaml:"user_id"`
	AllowedRooms   []string `yaml:"allowed_rooms"`
	PollTimeout    int      `yaml:"poll_timeout"`
}

// EmailChannel configures the IMAP/SMTP channel.
type EmailChannel struct {
	ChannelBase       `yaml:",inline"`
	SMTPHost          string   `yaml:"smtp_host"`
	SMTPPort          int      `yaml:"smtp_port"`
	SMTPStartTLS      bool     `yaml:"smtp_starttls"`
	SMTPUsernameEnv   string   `yaml:"smtp_username_env"`
	SMTPPasswordEnv   string   `yaml:"smtp_password_env"`
	SMTPUsername      string   `yaml:"smtp_username"`
	SMTPPassword      string   `yaml:"smtp_password"`
	IMAPHost          string   `yaml:"imap_host"`
	IMAPPort          int      `yaml:"imap_port"`
	IMAPUsernameEnv   string   `yaml:"imap_username_env"`
	IMAPPasswordEnv   string   `yaml:"imap_password_env"`
	IMAPUsername      string   `yaml:"imap_username"`
	IMAPPassword      string   `yaml:"imap_password"`
	Mailbox           string   `yaml:"mailbox"`
	FromAddress       string   `yaml:"from_address"`
	AllowedSenders    []string `yaml:"allowed_senders"`
	AllowedRecipients []string `yaml:"allowed_recipients"`
	TrustFromHeaders  bool     `yaml:"trust_from_headers"`
	PollInterval      int      `yaml:"poll_interval"`
}

// knownChannels builds the settings of each known channel type, defaults set.
var knownChannels = map[string]func() any{
	"telegram": func() any {
		return &TelegramChannel{BotTokenEnv: "DEMIURGE_TELEGRAM_BOT_TOKEN", UnauthorizedResponse: "brief", PollTimeout: 30,
			MessageFormat: "markdown_v2", RegisterCommands: true, SendTyping: true, RichMessages: true, ReplyToMode: "off",
			APIBaseURL: "https://api.telegram.org", MaxAttachmentBytes: 20 << 20}
	},
	"webhook": func() any {
		return &WebhookChannel{Host: "127.0.0.1", Port: 8765, Path: "/demiurge", TokenEnv: "DEMIURGE_WEBHOOK_TOKEN"}
	},
	"slack": func() any {
		return &SlackChannel{BotTokenEnv: "SLACK_BOT_TOKEN", SigningSecretEnv: "SLACK_SIGNING_SECRET", Host: "127.0.0.1",
			Port: 8766, Path: "/slack/events", AppMentionsOnly: true}
	},
	"mattermost": func() any {
		return &MattermostChannel{TokenEnv: "MATTERMOST_BOT_TOKEN", WebhookTokenEnv: "MATTERMOST_WEBHOOK_TOKEN",
			Host: "127.0.0.1", Port: 8767, Path: "/mattermost"}
	},
	"matrix": func() any { return &MatrixChannel{AccessTokenEnv: "MATRIX_ACCESS_TOKEN", PollTimeout: 30} },
	"email": func() any {
		return &EmailChannel{SMTPPort: 587, SMTPStartTLS: true, SMTPUsernameEnv: "DEMIURGE_SMTP_USERNAME",
			SMTPPasswordEnv: "DEMIURGE_SMTP_PASSWORD", IMAPPort: 993, IMAPUsernameEnv: "DEMIURGE_IMAP_USERNAME",
			IMAPPasswordEnv: "DEMIURGE_IMAP_PASSWORD", Mailbox: "INBOX", PollInterval: 30}
	},
}

// normalizeChannel is the original's channel-name normalisation.
func normalizeChannel(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

// UnmarshalYAML decodes the channels mapping: it picks each channel's
// settings type from its `type` key (default: its name).
func (c *Channels) UnmarshalYAML(node ast.Node) error {
	out := Channels{}
	if _, isNull := node.(*ast.NullNode); !isNull && node != nil && yamlx.MappingKeys(node) == nil {
		if _, empty := node.(*ast.MappingNode); !empty {
			return yamlx.AtLine(yamlx.NodeLine(node), "invalid value for channels: expected a mapping of channel names to settings")
		}
	}
	seen := map[string]string{}
	for _, e := range yamlx.MappingKeys(node) {
		name := normalizeChannel(e.Key)
		where := "channels." + e.Key
		if name == "" {
			return yamlx.AtLine(e.Line, "channel names must not be empty")
		}
		if prev, dup := seen[name]; dup {
			return yamlx.AtLine(e.Line, "duplicate channel %q: channels.%s and %s name the same channel", name, prev, where)
		}
		seen[name] = e.Key
		var probe map[string]any
		if err := yamlx.DecodeNode(e.Value, where, &probe); err != nil {
			return err
		}
		typ := name
		if raw, ok := probe["type"]; ok && raw != nil {
			s, ok := raw.(string)
			if !ok {
				return yamlx.AtLine(keyLine(e.Value, "type", e.Line), "invalid value for %s.type: expected a string", where)
			}
			if t := normalizeChannel(s); t != "" {
				typ = t
			}
		}
		ch := Channel{Name: name, Type: typ}
		if build, known := knownChannels[typ]; known {
			settings := build()
			if err := yamlx.DecodeNode(e.Value, where, settings); err != nil {
				return err
			}
			if err := validateChannel(e, where, settings); err != nil {
				return err
			}
			ch.Settings = settings
			ch.Enabled = enabledOf(settings)
		} else {
			if raw, ok := probe["enabled"]; ok && raw != nil {
				b, ok := raw.(bool)
				if !ok {
					return yamlx.AtLine(keyLine(e.Value, "enabled", e.Line), "invalid value for %s.enabled: expected a boolean (true or false)", where)
				}
				ch.Enabled = b
			}
			if probe == nil {
				probe = map[string]any{}
			}
			ch.Settings = probe
		}
		out[name] = ch
	}
	*c = out
	return nil
}

func enabledOf(settings any) bool {
	switch s := settings.(type) {
	case *TelegramChannel:
		return s.Enabled
	case *WebhookChannel:
		return s.Enabled
	case *SlackChannel:
		return s.Enabled
	case *MattermostChannel:
		return s.Enabled
	case *MatrixChannel:
		return s.Enabled
	case *EmailChannel:
		return s.Enabled
	}
	return false
}

// validateChannel checks the values of a known channel type.
func validateChannel(e yamlx.MappingEntry, where string, settings any) error {
	oneOf := func(key, v string, allowed ...string) error {
		if slices.Contains(allowed, v) {
			return nil
		}
		return yamlx.AtLine(keyLine(e.Value, key, e.Line), "invalid %s.%s: %q (expected one of: %s)", where, key, v, strings.Join(allowed, ", "))
	}
	port := func(key string, v int) error {
		if v >= 1 && v <= 65535 {
			return nil
		}
		return yamlx.AtLine(keyLine(e.Value, key, e.Line), "invalid %s.%s: %d (expected a port between 1 and 65535)", where, key, v)
	}
	positive := func(key string, v int) error {
		if v >= 1 {
			return nil
		}
		return yamlx.AtLine(keyLine(e.Value, key, e.Line), "invalid %s.%s: %d (expected at least 1)", where, key, v)
	}
	httpURL := func(key, v string) error {
		u, err := url.Parse(v)
		if err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil {
			return nil
		}
		return yamlx.AtLine(keyLine(e.Value, key, e.Line), "invalid %s.%s: %q (expected an http or https URL without credentials)", where, key, v)
	}
	var errs []error
	if b, ok := settings.(interface{ Base() *ChannelBase }); ok {
		base := b.Base()
		if base.BusyMode = strings.TrimSpace(base.BusyMode); base.BusyMode != "" {
			errs = append(errs, oneOf("busy_mode", base.BusyMode, "interrupt", "queue"))
		}
	}
	switch s := settings.(type) {
	case *TelegramChannel:
		errs = append(errs,
			oneOf("unauthorized_response", s.UnauthorizedResponse, "silent", "brief"),
			oneOf("message_format", s.MessageFormat, "markdown_v2", "plain"),
			oneOf("reply_to_mode", s.ReplyToMode, "off", "first", "all"),
			positive("poll_timeout", s.PollTimeout),
			httpURL("api_base_url", s.APIBaseURL),
		)
		if s.MaxAttachmentBytes < 1 || s.MaxAttachmentBytes > MaxTelegramAttachmentBytes {
			errs = append(errs, yamlx.AtLine(keyLine(e.Value, "max_attachment_bytes", e.Line),
				"invalid %s.max_attachment_bytes: %d (expected between 1 and %d)", where, s.MaxAttachmentBytes, int64(MaxTelegramAttachmentBytes)))
		}
	case *WebhookChannel:
		s.Path = slashPath(s.Path, "/demiurge")
		errs = append(errs, port("port", s.Port))
	case *SlackChannel:
		s.Path = slashPath(s.Path, "/slack/events")
		errs = append(errs, port("port", s.Port))
	case *MattermostChannel:
		s.Path = slashPath(s.Path, "/mattermost")
		errs = append(errs, port("port", s.Port))
	case *MatrixChannel:
		errs = append(errs, positive("poll_timeout", s.PollTimeout))
	case *EmailChannel:
		errs = append(errs, port("smtp_port", s.SMTPPort), port("imap_port", s.IMAPPort), positive("poll_interval", s.PollInterval))
	default:
		return fmt.Errorf("core: no validation for %T", settings)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// slashPath normalises an HTTP path the way the original does: blank means
// the default, and a leading '/' is added.
func slashPath(p, def string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return def
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// keyLine returns the line of key in the mapping node, or def.
func keyLine(node ast.Node, key string, def int) int {
	for _, e := range yamlx.MappingKeys(node) {
		if e.Key == key {
			return e.Line
		}
	}
	return def
}
