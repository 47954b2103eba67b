package telegram_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/channels/telegram"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

const token = "123456:ABCdefGhIJKlmnoPQRstuVWXyz"

// inbox keeps what the channel accepted and the committed cursor.
type inbox struct {
	mu     sync.Mutex
	envs   []demiurge.InboundEnvelope
	cursor string
	fail   bool
}

func (b *inbox) Accept(_ context.Context, envs []demiurge.InboundEnvelope, cursor string) ([]demiurge.InboxReceipt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "database is locked")
	}
	b.envs = append(b.envs, envs...)
	b.cursor = cursor
	out := make([]demiurge.InboxReceipt, len(envs))
	return out, nil
}

func (b *inbox) Cursor(context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cursor, nil
}

func (b *inbox) accepted() []demiurge.InboundEnvelope {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]demiurge.InboundEnvelope(nil), b.envs...)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newChannel(t *testing.T, api *demiurgetest.BotAPI, cfg telegram.Config) *telegram.Channel {
	t.Helper()
	cfg.Name, cfg.Token, cfg.APIBaseURL = "telegram", token, api.URL()
	if cfg.PollTimeout == 0 {
		cfg.PollTimeout = 1
	}
	if cfg.AllowedUsers == nil {
		cfg.AllowedUsers = []int64{42}
	}
	ch, err := telegram.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Close)
	return ch
}

// run polls until the test ends and returns what Run returned then.
func run(t *testing.T, ch *telegram.Channel, in telegram.Inbox) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, in) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// A private message from an allowed user is accepted with the spec's key
// and metadata, its offset committed and acknowledged on the next poll;
// the reply is valid MarkdownV2; commands are registered and typing shown.
func TestTelegramPollAndReply(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	ch := newChannel(t, api, telegram.Config{RegisterCommands: true, SendTyping: true, ReplyToMode: "first"})
	in := &inbox{}
	run(t, ch, in)
	id := api.Push(demiurgetest.TelegramPrivateText(42, "hello *bot*"))
	waitUntil(t, "the message", func() bool { return len(in.accepted()) == 1 })
	e := in.accepted()[0]
	if e.ConversationKey != "telegram:dm:42" || e.EventKey != "update:1" || e.Text != "hello *bot*" || e.Source != "42" || e.ReplyTo != "7" ||
		e.Metadata["telegram_user_id"] != "42" || e.Metadata["telegram_chat_type"] != "private" {
		t.Fatalf("envelope %+v", e)
	}
	api.WaitCall("getUpdates", func(p map[string]string) bool { return p["offset"] == "2" })
	if id != 1 {
		t.Fatalf("update id %d", id)
	}
	api.WaitCall("setMyCommands", func(p map[string]string) bool { return strings.Contains(p["commands"], `"command":"resume"`) })
	api.WaitCall("sendChatAction", func(p map[string]string) bool { return p["chat_id"] == "42" && p["action"] == "typing" })

	to := demiurge.Inbound{InboundEnvelope: e}
	if err := ch.Send(context.Background(), to, demiurge.Outbound{Text: "## Done\n\nResult: 1+1=2 (ok). **Bold** `a_b`!"}); err != nil {
		t.Fatal(err)
	}
	c := api.WaitCall("sendMessage", func(p map[string]string) bool { return p["parse_mode"] == "MarkdownV2" })
	if got, want := c.Params["text"], "*Done*\n\nResult: 1\\+1\\=2 \\(ok\\)\\. *Bold* `a_b`\\!"; got != want {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if c.Params["reply_to_message_id"] != "7" || c.Params["chat_id"] != "42" {
		t.Fatalf("send params %v", c.Params)
	}
}

// Deny by default: a user not allowed gets the brief refusal and nothing
// is admitted; in a group the chat must be allowed too; group chatter not
// addressed to the bot is ignored; a silent channel answers nothing.
func TestTelegramAllowlists(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	ch := newChannel(t, api, telegram.Config{AllowedUsers: []int64{42}, AllowedChats: []int64{-100}, BotUsername: "@DemiBot"})
	in := &inbox{}
	run(t, ch, in)
	api.Push(demiurgetest.TelegramPrivateText(7, "let me in"))
	api.Push(demiurgetest.TelegramGroupText(42, -200, "@demibot hi from a chat not allowed"))
	api.Push(demiurgetest.TelegramGroupText(42, -100, "just chatting"))
	api.Push(demiurgetest.TelegramGroupText(42, -100, "hey @DemiBot what's up"))
	api.Push(demiurgetest.TelegramGroupText(42, -100, "/new@DemiBot"))
	api.Push(map[string]any{"edited_message": map[string]any{"message_id": 1}})
	waitUntil(t, "the group messages", func() bool { return len(in.accepted()) == 2 })
	api.WaitCall("getUpdates", func(p map[string]string) bool { return p["offset"] == "7" })
	got := in.accepted()
	if got[0].Text != "hey what's up" || got[0].ConversationKey != "telegram:group:-100" || got[1].Text != "/new" {
		t.Fatalf("accepted %+v", got)
	}
	denied := 0
	for _, c := range api.Calls() {
		if c.Method == "sendMessage" && c.Params["text"] == "Telegram access denied for this user or chat." {
			denied++
		}
	}
	if denied != 2 {
		t.Fatalf("%d refusals, want 2 (the user, the chat)", denied)
	}
	if n := ch.Ignored(); n != 2 {
		t.Fatalf("ignored %d, want 2 (group chatter, an edited message)", n)
	}
}

// A MarkdownV2 chunk Telegram refuses to parse is resent as plain text;
// a long reply is split.
func TestTelegramParseFallbackAndSplit(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	ch := newChannel(t, api, telegram.Config{})
	api.RejectMarkdown(true)
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "42"}}
	if err := ch.Send(context.Background(), to, demiurge.Outbound{Text: "**Bold** text."}); err != nil {
		t.Fatal(err)
	}
	c := api.WaitCall("sendMessage", func(p map[string]string) bool { return p["parse_mode"] == "" })
	if c.Params["text"] != "Bold text." {
		t.Fatalf("plain fallback %q", c.Params["text"])
	}
	api.RejectMarkdown(false)
	long := strings.Repeat("word ", 1200)
	if err := ch.Send(context.Background(), to, demiurge.Outbound{Text: long}); err != nil {
		t.Fatal(err)
	}
	api.WaitCall("sendMessage", func(p map[string]string) bool { return strings.HasSuffix(p["text"], `\(2/2\)`) })
}

// Approval by inline keyboard: only the asked user's answer counts; an
// unknown approval is expired; no answer in time is a denial.
func TestTelegramApprovalKeyboard(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	ch := newChannel(t, api, telegram.Config{AllowedUsers: []int64{42, 43}, ApprovalTimeout: 5 * time.Second})
	in := &inbox{}
	run(t, ch, in)
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "42",
		Metadata: map[string]any{"telegram_user_id": "42", "telegram_chat_type": "private"}}}
	answered := make(chan string, 1)
	go func() {
		a, _ := ch.Ask(context.Background(), to, telegram.Approval{Summary: "run ls", Tool: "terminal", Risk: "medium",
			Capability: "terminal.exec", Action: "exec", Command: "ls -la"})
		answered <- a
	}()
	q := api.WaitCall("sendMessage", func(p map[string]string) bool { return strings.Contains(p["reply_markup"], "approval:1:session") })
	if !strings.Contains(q.Params["text"], "*Approval required*") || !strings.Contains(q.Params["text"], "This request expires in 10 minutes\\.") {
		t.Fatalf("question %q", q.Params["text"])
	}
	api.Push(demiurgetest.TelegramCallback(43, "approval:1:allow", 101))
	api.WaitCall("answerCallbackQuery", func(p map[string]string) bool { return p["text"] == "Telegram access denied." })
	api.Push(demiurgetest.TelegramCallback(42, "approval:9:allow", 101))
	api.WaitCall("answerCallbackQuery", func(p map[string]string) bool { return p["text"] == "Approval expired." })
	api.Push(demiurgetest.TelegramCallback(42, "approval:1:bogus", 101))
	api.WaitCall("answerCallbackQuery", func(p map[string]string) bool { return p["text"] == "Invalid approval action." })
	select {
	case a := <-answered:
		t.Fatalf("answered %q before the asked user answered", a)
	default:
	}
	api.Push(demiurgetest.TelegramCallback(42, "approval:1:session", 101))
	select {
	case a := <-answered:
		if a != telegram.AllowSession {
			t.Fatalf("answer %q", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	api.WaitCall("answerCallbackQuery", func(p map[string]string) bool { return p["text"] == "Approved." })
	api.WaitCall("editMessageText", func(p map[string]string) bool { return strings.Contains(p["text"], "*Approved for session*") })

	short := newChannel(t, api, telegram.Config{ApprovalTimeout: 50 * time.Millisecond})
	if a, err := short.Ask(context.Background(), to, telegram.Approval{Summary: "x", Tool: "t"}); a != telegram.Deny || err != nil {
		t.Fatalf("timeout: %q %v", a, err)
	}
	api.WaitCall("editMessageText", func(p map[string]string) bool { return strings.Contains(p["text"], "Request denied after") })
	group := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "-100",
		Metadata: map[string]any{"telegram_user_id": "42", "telegram_chat_type": "group"}}}
	if a, _ := short.Ask(context.Background(), group, telegram.Approval{}); a != telegram.Deny {
		t.Fatalf("group approval %q", a)
	}
	api.WaitCall("sendMessage", func(p map[string]string) bool {
		return strings.HasPrefix(p["text"], "Telegram approval is only supported in private chat.")
	})
}

// getUpdates failing with 500 ends the run with an error naming no token
// (the gateway retries it on its own schedule); 429 waits retry_after and
// goes on; six 409s in a row end the run with the spec's message; an
// inbox that cannot commit leaves the offset where it was.
func TestTelegramPollingFaults(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, token)
	ch := newChannel(t, api, telegram.Config{ConflictWait: 3 * time.Millisecond})
	in := &inbox{}
	api.Fail500(1)
	err := ch.Run(context.Background(), in)
	if demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE || err.Error() != "telegram getUpdates failed (500): Internal Server Error" {
		t.Fatalf("500: %v", err)
	}
	api.Conflict(6)
	err = ch.Run(context.Background(), in)
	if err == nil || err.Error() != "telegram polling conflict did not clear; another gateway may be using this bot token" {
		t.Fatalf("409: %v", err)
	}
	api.Fail429(1)
	stop := run(t, ch, in)
	api.Push(demiurgetest.TelegramPrivateText(42, "after a 429"))
	waitUntil(t, "the message after 429", func() bool { return len(in.accepted()) == 1 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	in.mu.Lock()
	in.fail = true
	in.mu.Unlock()
	api.Push(demiurgetest.TelegramPrivateText(42, "not committed"))
	err = ch.Run(context.Background(), in)
	if err == nil || err.Error() != "database is locked" || in.cursor != "2" {
		t.Fatalf("inbox failure: %v, cursor %q", err, in.cursor)
	}

	dead, err := telegram.New(telegram.Config{Name: "telegram", Token: token, APIBaseURL: "http://127.0.0.1:1", PollTimeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = dead.Send(context.Background(), demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "42"}}, demiurge.Outbound{Text: "x"})
	if err == nil || strings.Contains(err.Error(), token) || demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("unreachable API: %v", err)
	}
	var apiErr *telegram.APIError
	if errors.As(err, &apiErr) {
		t.Fatalf("a transport failure reported as an API error: %v", err)
	}
	if _, err := telegram.New(telegram.Config{Name: "telegram"}); err == nil || err.Error() != "telegram channel requires bot_token_env with a value or bot_token" {
		t.Fatalf("no token: %v", err)
	}
}
