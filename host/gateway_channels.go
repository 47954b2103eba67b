package host

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/channels/email"
	"github.com/demiurge/demiurge/channels/telegram"
	"github.com/demiurge/demiurge/channels/webhook"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/gateway"
	"github.com/demiurge/demiurge/urlpolicy"
)

// builtChannel is one enabled channel of one core as the gateway runs it,
// or, with Err set, the reason it cannot run (it is reported disabled).
type builtChannel struct {
	CoreID, Name, Type string
	spec               gateway.Channel
	// secrets are the channel's credentials, redacted from every log,
	// stored error and status line.
	secrets []string
	close   func()
	// approver, when the channel can put approval questions to its users,
	// returns the Approver of a turn an inbound started (nil: none, so a
	// prompt is a denial).
	approver func(in demiurge.Inbound) effect.Approver
	Err      error
}

// channelEnv is what building a channel needs of the Host.
type channelEnv struct {
	getenv    func(string) string
	urlPolicy urlpolicy.Policy
	logger    *slog.Logger
	// busyMode is config.yaml's channel.busy_mode, for channels that set
	// none.
	busyMode string
	// mailTLS, set by tests, is the mail clients' TLS configuration (their
	// own certificate authority).
	mailTLS *tls.Config
	// approvalTimeout bounds a channel's approval question (0: the
	// channel's default, 10 minutes).
	approvalTimeout time.Duration
	// webhookListener, set by tests, serves every webhook channel on one
	// listener instead of its configured address.
	webhookListener func(coreID, name string) net.Listener
	// workspace is the core's workspace (where a channel stores the files
	// users send and reads the files a turn sends); artifacts is the
	// home's session artifact directory. "" for a channel that is only
	// checked.
	workspace, artifacts string
}

var channelName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// resolveSecret is the original's credential rule: the variable named by
// the `_env` key when it is set and not empty, else the inline value.
func resolveSecret(getenv func(string) string, envName, inline string) string {
	if envName != "" {
		if v := getenv(envName); v != "" {
			return v
		}
	}
	return inline
}

// buildChannel builds the enabled channel ch of coreID. It starts nothing.
func buildChannel(coreID string, ch core.Channel, env channelEnv) builtChannel {
	b := builtChannel{CoreID: coreID, Name: ch.Name, Type: ch.Type, close: func() {}}
	if !channelName.MatchString(ch.Name) {
		b.Err = demiurge.Errorf(demiurge.ECONFIG, "channel name %q must be a lowercase identifier (a letter, then letters, digits or _)", ch.Name)
		return b
	}
	switch s := ch.Settings.(type) {
	case *core.WebhookChannel:
		cfg := webhook.Config{
			Name: ch.Name, Addr: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: s.Path,
			Token:                 resolveSecret(env.getenv, s.TokenEnv, s.Token),
			AllowUnauthenticated:  s.AllowUnauthenticated,
			CallbackURL:           resolveSecret(env.getenv, s.CallbackURLEnv, s.CallbackURL),
			AllowPrivateCallbacks: s.AllowPrivateCallbackURLs,
			AllowedSources:        s.AllowedSources,
			DeliveryTargets:       s.DeliveryTargets,
			CallbackSecret:        resolveSecret(env.getenv, s.CallbackSecretEnv, s.CallbackSecret),
			URLPolicy:             env.urlPolicy,
			Logger:                env.logger,
		}
		if env.webhookListener != nil {
			cfg.Listener = env.webhookListener(coreID, ch.Name)
		}
		wh, err := webhook.New(cfg)
		if err != nil {
			b.Err = err
			return b
		}
		b.secrets = nonEmpty(cfg.Token, cfg.CallbackSecret)
		b.close = wh.Close
		b.spec = gateway.Channel{CoreID: coreID, Name: ch.Name, Type: ch.Type, BusyMode: cmp.Or(s.BusyMode, env.busyMode),
			Run:  func(ctx context.Context, in gateway.Inbox) error { return wh.Run(ctx, in) },
			Send: wh.Send}
	case *core.TelegramChannel:
		cfg := telegram.Config{
			Name: ch.Name, Token: resolveSecret(env.getenv, s.BotTokenEnv, s.BotToken), APIBaseURL: s.APIBaseURL,
			BotUsername: s.BotUsername, AllowedUsers: s.AllowedUsers, AllowedChats: s.AllowedChats,
			UnauthorizedResponse: s.UnauthorizedResponse, PollTimeout: s.PollTimeout, MessageFormat: s.MessageFormat,
			RegisterCommands: s.RegisterCommands, SendTyping: s.SendTyping, ReplyToMode: s.ReplyToMode,
			ApprovalTimeout: env.approvalTimeout, Logger: env.logger,
			AttachmentRoot: env.workspace, MaxAttachmentBytes: s.MaxAttachmentBytes,
		}
		if env.workspace != "" {
			cfg.OpenUpload = uploadOpener(env.workspace, env.artifacts)
		}
		tg, err := telegram.New(cfg)
		if err != nil {
			b.Err = err
			return b
		}
		b.secrets = nonEmpty(cfg.Token)
		b.close = tg.Close
		b.spec = gateway.Channel{CoreID: coreID, Name: ch.Name, Type: ch.Type, BusyMode: cmp.Or(s.BusyMode, env.busyMode),
			Run:  func(ctx context.Context, in gateway.Inbox) error { return tg.Run(ctx, in) },
			Send: tg.Send}
		b.approver = func(in demiurge.Inbound) effect.Approver { return telegramApprover{ch: tg, in: in} }
	case *core.EmailChannel:
		// Passwords come from the operator's environment (or .env), never
		// from the core, which an agent may edit.
		if s.SMTPPassword != "" || s.IMAPPassword != "" {
			b.Err = demiurge.Errorf(demiurge.ECONFIG, "email channel %s takes passwords only from the environment: use smtp_password_env and imap_password_env, not smtp_password or imap_password", ch.Name)
			return b
		}
		cfg := email.Config{
			Name: ch.Name, IMAPHost: s.IMAPHost, IMAPPort: s.IMAPPort, Mailbox: s.Mailbox,
			IMAPUsername: resolveSecret(env.getenv, s.IMAPUsernameEnv, s.IMAPUsername), IMAPPassword: resolveSecret(env.getenv, s.IMAPPasswordEnv, ""),
			SMTPHost: s.SMTPHost, SMTPPort: s.SMTPPort, SMTPStartTLS: s.SMTPStartTLS,
			SMTPUsername: resolveSecret(env.getenv, s.SMTPUsernameEnv, s.SMTPUsername), SMTPPassword: resolveSecret(env.getenv, s.SMTPPasswordEnv, ""),
			FromAddress: s.FromAddress, AllowedSenders: s.AllowedSenders, AllowedRecipients: s.AllowedRecipients,
			TrustFromHeaders: s.TrustFromHeaders, PollInterval: time.Duration(s.PollInterval) * time.Second,
			TLS: env.mailTLS, Logger: env.logger,
		}
		m, err := email.New(cfg)
		if err != nil {
			b.Err = err
			return b
		}
		b.secrets = nonEmpty(cfg.IMAPPassword, cfg.SMTPPassword)
		b.spec = gateway.Channel{CoreID: coreID, Name: ch.Name, Type: ch.Type, BusyMode: cmp.Or(s.BusyMode, env.busyMode),
			Run:  func(ctx context.Context, in gateway.Inbox) error { return m.Run(ctx, in) },
			Send: m.Send}
	default:
		b.Err = demiurge.Errorf(demiurge.ECONFIG, "unsupported enabled gateway channel: %s", ch.Name)
	}
	return b
}

// telegramApprover puts a turn's approval questions to the Telegram user
// whose message started it.
type telegramApprover struct {
	ch *telegram.Channel
	in demiurge.Inbound
}

func (a telegramApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	q := telegram.Approval{Summary: req.Summary, Tool: req.Tool, Risk: req.Risk, Capability: req.Capability,
		Action: req.Action, Target: req.Target}
	if cmd, ok := req.Preview["command"].(string); ok {
		q.Command = cmd
	}
	if len(req.Preview) > 0 {
		if b, err := json.MarshalIndent(req.Preview, "", "  "); err == nil {
			q.Arguments = string(b)
		}
	}
	answer, err := a.ch.Ask(ctx, a.in, q)
	if err != nil {
		return effect.DecisionDeny, err
	}
	switch answer {
	case telegram.AllowOnce:
		return effect.DecisionAllowOnce, nil
	case telegram.AllowSession:
		return effect.DecisionAllowSession, nil
	}
	return effect.DecisionDeny, nil
}

func nonEmpty(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// coreIDs lists the cores of the home (directories of agents/ with an
// agent.yaml), sorted.
func coreIDs(h Home) ([]string, error) {
	entries, err := os.ReadDir(h.AgentsDir())
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "read %s: %s", h.AgentsDir(), demiurge.IOReason(err))
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(h.CoreDir(e.Name()), "agent.yaml")); err == nil {
			ids = append(ids, e.Name())
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// enabledChannels returns the enabled channels of c, by name.
func enabledChannels(c *core.Core) []core.Channel {
	var out []core.Channel
	for _, name := range slices.Sorted(maps.Keys(c.Manifest.Channels)) {
		if ch := c.Manifest.Channels[name]; ch.Enabled {
			out = append(out, ch)
		}
	}
	return out
}
