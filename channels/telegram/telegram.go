// Package telegram is the Telegram channel over the Bot API with long
// polling (spec surfaces §3.5–§3.8). It is an adapter (a leaf): a
// hand-written client of the documented wire format (form-encoded POSTs to
// <api_base_url>/bot<token>/<method>, JSON answers), chosen over the Bot API
// libraries because none of them takes a context (a long poll must end when
// the gateway stops) or keeps the token out of its errors.
//
// # Inbound
//
// Run deletes any webhook, registers the channel commands (setMyCommands,
// unless register_commands is false), then long-polls getUpdates from the
// offset the inbox last committed. Each batch is accepted into the inbox
// with the next offset as the channel's cursor, in one transaction, before
// the next getUpdates acknowledges it to Telegram: a crash re-reads the
// batch, and the inbox's dedup key (the update id) admits each message
// once. Allowed users and chats deny by default (private chat: the user
// must be allowed; group: the user and the chat); an unauthorised message
// gets "Telegram access denied for this user or chat." (or nothing with
// unauthorized_response: silent). Groups need a mention, a reply to the
// bot, /ask, or a command addressed to the bot. Update kinds other than
// message and callback_query, and files in groups, are not admitted
// (counted as ignored). Polling errors: 409 (another poller) waits 15 s,
// 25 s, … and fails the run after six; 429 waits retry_after; transport
// errors back off 1 s doubling to 30 s; any other error fails the run,
// which the gateway retries on its own schedule.
//
// # Files in
//
// In a private chat, a message's file (the largest size of a photo, else
// a voice message, audio, video or document) is downloaded before the
// message is accepted — getFile, then GET
// <api_base_url>/file/bot<token>/<file_path> — and stored under
// Config.AttachmentRoot (the core's workspace) at
// .demiurge-telegram/<chat>/<message id>-<digest>/<name>, so its
// reference (demiurge.InboundAttachment) is committed with the inbound and
// the turn sees it in ctx.input.attachments. The caption is the text; a
// file alone is the text "[telegram attachment]". A file over
// MaxAttachmentBytes (20 MiB by default, Telegram's own getFile bound) is
// refused before anything is downloaded — by the size the message
// declares, the size getFile reports, or, failing both, the bytes read —
// and the user is told. getFile and the download are tried again after
// 0.5, 1 and 2 s when they got no answer; a download that still fails is
// logged (never with the token, which the file URL holds) and recorded in
// the metadata telegram_attachment_errors. A file alone that could not be
// stored starts no turn. The same update read again after a crash is
// stored at the same place.
//
// # Outbound
//
// Replies are rendered to MarkdownV2 (FormatMarkdownV2) or sent plain,
// split at Telegram's length (SplitMessage); a chunk Telegram cannot parse
// is resent as plain text. reply_to_mode off|first|all sets
// reply_to_message_id. A typing indicator is sent when a message is
// accepted (send_typing).
//
// A delivery with media blocks is sent block by block (media_out.go): an
// image with sendPhoto, MP4 video with sendVideo, OGG audio with
// sendVoice, MP3/M4A audio with sendAudio, any other file with
// sendDocument, each with its
// caption formatted like a message (at most CaptionLimit; a longer one
// follows as a message). A URL is handed to Telegram; a local file is
// uploaded as multipart/form-data after Config.OpenUpload opened it, which
// refuses a file the turn could not read. A block that cannot be sent is
// replaced by a line of text and the delivery fails with its reason.
//
// # Approvals
//
// Ask puts a Host approval question to the user whose message started the
// turn, in their private chat, as a MarkdownV2 message with an inline
// keyboard (Allow once / Allow for session / Deny; callback data
// approval:<id>:<allow|session|deny>). Only that user may answer (anyone
// else gets "Telegram access denied."); an unknown or answered id gets
// "Approval expired."; after ApprovalTimeout (10 minutes) or when the turn
// ends first, the question is denied and its message says so. In a group
// the question is denied with the spec's message.
package telegram

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/demiurge/demiurge"
)

// Inbox is what the channel hands updates to: Accept returns once the
// envelopes and the cursor (the next getUpdates offset) are committed;
// Cursor returns the last committed one.
type Inbox interface {
	Accept(ctx context.Context, envs []demiurge.InboundEnvelope, cursor string) ([]demiurge.InboxReceipt, error)
	Cursor(ctx context.Context) (string, error)
}

// Config configures one Telegram channel.
type Config struct {
	Name                 string
	Token                string
	APIBaseURL           string // default https://api.telegram.org
	BotUsername          string
	AllowedUsers         []int64
	AllowedChats         []int64
	UnauthorizedResponse string // brief (default) or silent
	PollTimeout          int    // getUpdates long-poll seconds (default 30)
	MessageFormat        string // markdown_v2 (default) or plain
	RegisterCommands     bool
	SendTyping           bool
	ReplyToMode          string // off (default), first, all
	// AttachmentRoot is the directory (absolute; the core's workspace)
	// under which files sent in private chats are stored, in
	// AttachmentDir; "" admits no files (a message that is only a file
	// is ignored).
	AttachmentRoot string
	// MaxAttachmentBytes bounds one inbound file (default
	// DefaultMaxAttachmentBytes); a larger one is refused unread.
	MaxAttachmentBytes int64
	// OpenUpload opens a local file a delivery names for upload (sessionID
	// is the delivery's session); it must refuse a file the turn could
	// not read. nil: local files are never sent.
	OpenUpload func(sessionID, path string) (*os.File, error)
	// ApprovalTimeout is how long an approval question waits (default 10 min).
	ApprovalTimeout time.Duration
	// ConflictWait is the first wait after a 409 (default 15 s; each next
	// wait is two thirds of it longer: 15, 25, 35, 45, 55 s).
	ConflictWait time.Duration
	// RetryWait is the first wait before a file request that got no
	// answer is tried again (default 500 ms, doubling).
	RetryWait  time.Duration
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Channel is one Telegram bot. It is safe for concurrent use.
type Channel struct {
	cfg     Config
	api     *client
	ignored atomic.Int64

	mu        sync.Mutex // guards approvals, nextID
	approvals map[string]*pendingApproval
	nextID    int
}

// Commands registered with setMyCommands: the ones the gateway answers.
var commands = []struct{ name, desc string }{
	{"help", "Show the commands"},
	{"new", "Start a new session"},
	{"sessions", "List this chat's sessions"},
	{"resume", "Resume a session by number or id"},
	{"stop", "Stop the running turn and clear queued messages"},
	{"queue", "Queue a prompt behind the running turn"},
}

// New checks cfg and returns the channel; ECONFIG "telegram channel
// requires bot_token_env with a value or bot_token" without a token.
func New(cfg Config) (*Channel, error) {
	if cfg.Token == "" {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "telegram channel requires bot_token_env with a value or bot_token")
	}
	if strings.ContainsAny(cfg.Token, "/?#% \n") {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "telegram channel %s: the bot token has characters a token never has", cfg.Name)
	}
	if cfg.APIBaseURL == "" {
		cfg.APIBaseURL = "https://api.telegram.org"
	}
	u, err := url.Parse(cfg.APIBaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "telegram channel %s: api_base_url %q is not an http(s) URL", cfg.Name, cfg.APIBaseURL)
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 30
	}
	if cfg.UnauthorizedResponse == "" {
		cfg.UnauthorizedResponse = "brief"
	}
	if cfg.MessageFormat == "" {
		cfg.MessageFormat = "markdown_v2"
	}
	if cfg.ReplyToMode == "" {
		cfg.ReplyToMode = "off"
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = 10 * time.Minute
	}
	if cfg.MaxAttachmentBytes <= 0 {
		cfg.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	if cfg.AttachmentRoot != "" && !filepath.IsAbs(cfg.AttachmentRoot) {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "telegram channel %s: the attachment directory %q is not absolute", cfg.Name, cfg.AttachmentRoot)
	}
	if cfg.ConflictWait <= 0 {
		cfg.ConflictWait = 15 * time.Second
	}
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = 500 * time.Millisecond
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4,
			IdleConnTimeout: time.Minute, TLSHandshakeTimeout: 10 * time.Second},
			// Every URL holds the token: a redirect is an answer, never
			// followed (a Referer would carry the token elsewhere).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.BotUsername = strings.ToLower(strings.TrimPrefix(cfg.BotUsername, "@"))
	return &Channel{cfg: cfg, api: &client{base: strings.TrimRight(cfg.APIBaseURL, "/"), token: cfg.Token, http: cfg.HTTPClient},
		approvals: map[string]*pendingApproval{}}, nil
}

// Close releases the client's idle connections.
func (c *Channel) Close() { c.cfg.HTTPClient.CloseIdleConnections() }

// Ignored is how many updates were not admitted (unsupported kinds, files
// in groups or without an attachment root, group chatter not addressed to
// the bot).
func (c *Channel) Ignored() int64 { return c.ignored.Load() }

// Run polls until ctx ends (nil) or polling fails (the error).
func (c *Channel) Run(ctx context.Context, inbox Inbox) error {
	if err := c.api.call(ctx, "deleteWebhook", url.Values{"drop_pending_updates": {"false"}}, nil); err != nil && ctx.Err() == nil {
		c.cfg.Logger.Warn("telegram deleteWebhook", "channel", c.cfg.Name, "err", err.Error())
	}
	if c.cfg.RegisterCommands {
		var cmds []map[string]string
		for _, cmd := range commands {
			cmds = append(cmds, map[string]string{"command": cmd.name, "description": cmd.desc})
		}
		if err := c.api.call(ctx, "setMyCommands", url.Values{"commands": {jsonString(cmds)}}, nil); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Warn("telegram setMyCommands", "channel", c.cfg.Name, "err", err.Error())
		}
	}
	cursor, err := inbox.Cursor(ctx)
	if err != nil {
		return err
	}
	conflicts, transient := 0, 0
	for ctx.Err() == nil {
		params := url.Values{"timeout": {strconv.Itoa(c.cfg.PollTimeout)}, "allowed_updates": {`["message","callback_query"]`}}
		if cursor != "" {
			params.Set("offset", cursor)
		}
		var updates []update
		err := c.api.call(ctx, "getUpdates", params, &updates)
		if ctx.Err() != nil {
			return nil
		}
		var api *APIError
		var tr *transportError
		switch {
		case err == nil:
			conflicts, transient = 0, 0
		case errors.As(err, &api) && api.Code == http.StatusConflict:
			conflicts++
			if conflicts > 5 {
				return demiurge.Errorf(demiurge.ECONFLICT, "telegram polling conflict did not clear; another gateway may be using this bot token")
			}
			sleep(ctx, c.cfg.ConflictWait+time.Duration(conflicts-1)*c.cfg.ConflictWait*2/3)
			continue
		case errors.As(err, &api) && api.Code == http.StatusTooManyRequests:
			sleep(ctx, max(api.RetryAfter, time.Second))
			continue
		case errors.As(err, &tr):
			transient++
			sleep(ctx, min(time.Second<<min(transient-1, 5), 30*time.Second))
			continue
		default:
			return coded(err)
		}
		if len(updates) == 0 {
			continue
		}
		next := cursor
		var envs []demiurge.InboundEnvelope
		var typing []int64
		for _, u := range updates {
			next = strconv.FormatInt(u.UpdateID+1, 10)
			switch {
			case u.CallbackQuery != nil:
				c.callback(ctx, u.CallbackQuery)
			case u.Message != nil:
				env, ok := c.inbound(ctx, u)
				if ok {
					envs = append(envs, env)
					typing = append(typing, u.Message.Chat.ID)
				}
			default:
				c.ignored.Add(1)
			}
		}
		if ctx.Err() != nil {
			return nil // a download was cut short: the batch is read again
		}
		if _, err := inbox.Accept(ctx, envs, next); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err // nothing acknowledged: the batch is read again
		}
		cursor = next
		if c.cfg.SendTyping {
			for _, chatID := range typing {
				_ = c.api.call(ctx, "sendChatAction", url.Values{"chat_id": {strconv.FormatInt(chatID, 10)}, "action": {"typing"}}, nil)
			}
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// inbound normalises and authorises one message update (spec §3.8.1–3.8.3)
// and stores the file of a private message (§3.8.6) before it is accepted.
func (c *Channel) inbound(ctx context.Context, u update) (demiurge.InboundEnvelope, bool) {
	m := u.Message
	if m.From == nil || m.Chat.ID == 0 {
		c.ignored.Add(1)
		return demiurge.InboundEnvelope{}, false
	}
	chatType := m.Chat.Type
	if chatType == "" {
		chatType = "private"
	}
	private := chatType == "private"
	text := strings.TrimSpace(m.Text)
	if text == "" && private {
		text = strings.TrimSpace(m.Caption)
	}
	// Groups never take files; a private chat does when the Host gave a
	// place to keep them.
	var md media
	hasMedia := false
	if private && c.cfg.AttachmentRoot != "" {
		md, hasMedia = mediaOf(m)
	}
	group := chatType == "group" || chatType == "supergroup"
	if group {
		var ok bool
		if text, ok = c.groupText(m, text); !ok {
			c.ignored.Add(1)
			return demiurge.InboundEnvelope{}, false
		}
	}
	mediaOnly := text == "" && hasMedia
	if mediaOnly {
		text = mediaOnlyText
	}
	if text == "" {
		c.ignored.Add(1) // nothing this channel admits (a file in a group, a sticker)
		return demiurge.InboundEnvelope{}, false
	}
	if !c.authorized(m.From.ID, m.Chat.ID, group) {
		if c.cfg.UnauthorizedResponse == "brief" {
			_, _ = c.sendText(ctx, m.Chat.ID, "Telegram access denied for this user or chat.", m.MessageID, "", false)
		}
		return demiurge.InboundEnvelope{}, false
	}
	chatID := strconv.FormatInt(m.Chat.ID, 10)
	scope := "dm"
	if group {
		scope = "group"
	}
	key := "telegram:" + scope + ":" + demiurge.PercentEncode(chatID)
	env := demiurge.InboundEnvelope{
		EventKey: "update:" + strconv.FormatInt(u.UpdateID, 10), ConversationKey: key, PrincipalKey: key,
		Source: chatID, ReplyTo: strconv.FormatInt(m.MessageID, 10), Text: text,
		Metadata: map[string]any{"telegram_chat_id": chatID, "telegram_chat_type": chatType,
			"telegram_user_id": strconv.FormatInt(m.From.ID, 10), "telegram_update_id": u.UpdateID, "telegram_message_id": m.MessageID},
	}
	if !hasMedia {
		return env, true
	}
	att, err := c.fetch(ctx, m, md)
	if err != nil {
		if ctx.Err() != nil {
			return demiurge.InboundEnvelope{}, false
		}
		reason := strings.ReplaceAll(err.Error(), c.cfg.Token, "[REDACTED]")
		c.cfg.Logger.Warn("telegram attachment not stored", "channel", c.cfg.Name, "chat_id", chatID,
			"message_id", m.MessageID, "err", reason)
		env.Metadata["telegram_attachment_errors"] = []any{reason}
		if mediaOnly {
			// Nothing is left to answer: the user is told, no turn runs.
			_, _ = c.sendText(ctx, m.Chat.ID, attachmentRefused, m.MessageID, "", false)
			return demiurge.InboundEnvelope{}, false
		}
	} else {
		env.Attachments = []demiurge.InboundAttachment{att}
	}
	env.Metadata["telegram_attachment_count"] = len(env.Attachments)
	env.Metadata["telegram_media_only"] = mediaOnly
	return env, true
}

// groupText applies the group rules (§3.8.2): /ask, a command addressed
// to the bot, a bare command when no bot username is configured, a
// mention, or a reply to the bot.
func (c *Channel) groupText(m *message, text string) (string, bool) {
	bot := c.cfg.BotUsername
	if strings.HasPrefix(text, "/") {
		head, rest, _ := strings.Cut(text, " ")
		name, at, addressed := strings.Cut(head[1:], "@")
		switch {
		case addressed && bot != "" && strings.EqualFold(at, bot):
			if name == "ask" {
				return strings.TrimSpace(rest), true
			}
			return strings.TrimSpace("/" + name + " " + rest), true
		case addressed:
			return "", false
		case name == "ask":
			return strings.TrimSpace(rest), true
		case bot == "":
			return text, true
		}
	}
	if bot != "" && strings.Contains(strings.ToLower(text), "@"+bot) {
		lower := strings.ToLower(text)
		var b strings.Builder
		for i := 0; i < len(text); {
			if strings.HasPrefix(lower[i:], "@"+bot) {
				i += len(bot) + 1
				continue
			}
			b.WriteByte(text[i])
			i++
		}
		return strings.Join(strings.Fields(b.String()), " "), true
	}
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.IsBot && (bot == "" || strings.EqualFold(r.From.Username, bot)) {
		return text, true
	}
	return "", false
}

// authorized: deny by default; a private chat needs the user allowed, a
// group the user and the chat.
func (c *Channel) authorized(userID, chatID int64, group bool) bool {
	if !slices.Contains(c.cfg.AllowedUsers, userID) {
		return false
	}
	return !group || slices.Contains(c.cfg.AllowedChats, chatID)
}

// AllowsTarget reports whether a schedule may deliver to chatID: it must be
// an allowed user or chat.
func (c *Channel) AllowsTarget(chatID int64) bool {
	return slices.Contains(c.cfg.AllowedUsers, chatID) || slices.Contains(c.cfg.AllowedChats, chatID)
}

// Send delivers out to the chat of to: its text, or, when it carries
// media, its blocks in order (media_out.go).
func (c *Channel) Send(ctx context.Context, to demiurge.Inbound, out demiurge.Outbound) error {
	media := hasMedia(out.Blocks)
	if !media && strings.TrimSpace(out.Text) == "" {
		return nil
	}
	chatID, err := strconv.ParseInt(to.Source, 10, 64)
	if err != nil {
		return demiurge.Errorf(demiurge.EINVALID, "telegram delivery has no chat id")
	}
	replyTo, _ := strconv.ParseInt(to.ReplyTo, 10, 64)
	if media {
		return c.sendBlocks(ctx, chatID, replyTo, out)
	}
	_, err = c.sendText(ctx, chatID, out.Text, replyTo, "", c.cfg.MessageFormat == "markdown_v2")
	return coded(err)
}

// sendText sends text split into messages; markup goes on the first one.
// In MarkdownV2 a chunk Telegram cannot parse is resent as plain text. It
// returns the first message's id.
func (c *Channel) sendText(ctx context.Context, chatID int64, text string, replyTo int64, markup string, mdv2 bool) (int64, error) {
	body := text
	if mdv2 {
		body = FormatMarkdownV2(text)
	}
	var first int64
	for i, chunk := range SplitMessage(body, MessageLimit, mdv2) {
		params := url.Values{"chat_id": {strconv.FormatInt(chatID, 10)}, "text": {chunk}}
		if mdv2 {
			params.Set("parse_mode", "MarkdownV2")
		}
		if replyTo != 0 && (c.cfg.ReplyToMode == "all" || c.cfg.ReplyToMode == "first" && i == 0) {
			params.Set("reply_to_message_id", strconv.FormatInt(replyTo, 10))
		}
		if markup != "" && i == 0 {
			params.Set("reply_markup", markup)
		}
		var sent sentMessage
		err := c.api.call(ctx, "sendMessage", params, &sent)
		var api *APIError
		if err != nil && mdv2 && errors.As(err, &api) && parseError(api.Description) {
			params.Del("parse_mode")
			params.Set("text", stripMDV2(chunk))
			err = c.api.call(ctx, "sendMessage", params, &sent)
		}
		if err != nil {
			return first, err
		}
		if i == 0 {
			first = sent.MessageID
		}
	}
	return first, nil
}

func parseError(desc string) bool {
	d := strings.ToLower(desc)
	return strings.Contains(d, "parse") || strings.Contains(d, "markdown") || strings.Contains(d, "entit")
}
