package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/gateway"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// enableWebhook writes a webhook channel into the assistant core of home.
func enableWebhook(t *testing.T, home, extra string) {
	t.Helper()
	path := filepath.Join(home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(b), "channels: {}\n", "channels:\n  webhook:\n    enabled: true\n    token: tok-123456789\n"+extra, 1)
	if yaml == string(b) {
		t.Fatal("agent.yaml has no empty channels block")
	}
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// gatewayHost opens a Host over home with its webhook channel served on a
// loopback listener, and returns the webhook's URL.
func gatewayHost(t *testing.T, home string) (*host.Host, string) {
	t.Helper()
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := host.WithWebhookListener(host.GatewayOptions{Drain: 5 * time.Second}, func(string, string) net.Listener { return ln })
	report, err := h.StartGateway(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(report) != 1 || report[0].Err != nil {
		t.Fatalf("report %+v", report)
	}
	return h, "http://" + ln.Addr().String() + "/demiurge"
}

// callbacks is a loopback callback receiver.
func callbacks(t *testing.T) (*httptest.Server, chan map[string]any) {
	t.Helper()
	got := make(chan map[string]any, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		got <- m
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func postJSON(t *testing.T, url string, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok-123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func nextCallback(t *testing.T, got chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no callback")
	}
	return nil
}

// End to end over loopback HTTP: a webhook message becomes one turn on
// the conversation's session and its reply reaches the callback; a
// repeated request id is not admitted twice; /new and /sessions answer
// from the channel; gateway status reports the channel and its inbox.
func TestGatewayWebhookEndToEnd(t *testing.T) {
	home := t.TempDir()
	h0, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h0.Close(context.Background())
	enableWebhook(t, home, "    allow_private_callback_urls: true\n")
	h, url := gatewayHost(t, home)
	cb, got := callbacks(t)

	body := map[string]any{"text": "hello there", "source": "ci", "request_id": "r-1", "callback_url": cb.URL + "/reply"}
	status, resp := postJSON(t, url, body)
	if status != 202 || resp != `{"conversation_key":"webhook:source:ci","ok":true}` {
		t.Fatalf("POST: %d %s", status, resp)
	}
	m := nextCallback(t, got)
	if m["text"] != "[fake] hello there" || m["reply_to"] != "r-1" || m["source"] != "ci" || m["channel"] != "webhook" {
		t.Fatalf("callback %v", m)
	}
	if status, _ := postJSON(t, url, body); status != 202 {
		t.Fatalf("repeat: %d", status)
	}
	db := host.StoreOf(h)
	ctx := context.Background()
	waitInbox := func(n int) []demiurge.Inbound {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			all, err := db.Inbounds(ctx, store.InboundFilter{})
			if err != nil {
				t.Fatal(err)
			}
			done := 0
			for _, in := range all {
				if in.Status == demiurge.InboundDone {
					done++
				}
			}
			if done == n && len(all) == n {
				return all
			}
			if time.Now().After(deadline) {
				t.Fatalf("inbox %+v, want %d done", all, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first := waitInbox(1)[0]
	sessions, err := h.ListSessions(ctx, "assistant", 10)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := h.ListTurns(ctx, "assistant", first.SessionID, 10)
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns %v %v (sessions %d)", turns, err, len(sessions))
	}

	postJSON(t, url, map[string]any{"text": "/new", "source": "ci", "request_id": "r-2", "callback_url": cb.URL})
	if m := nextCallback(t, got); !strings.HasPrefix(m["text"].(string), "New session: `session_") {
		t.Fatalf("/new answered %v", m)
	}
	postJSON(t, url, map[string]any{"text": "/sessions", "source": "ci", "request_id": "r-3", "callback_url": cb.URL})
	m = nextCallback(t, got)
	if text := m["text"].(string); !strings.HasPrefix(text, "# Sessions\n1. * `session_") || !strings.Contains(text, "2.   `"+first.SessionID+"`") {
		t.Fatalf("/sessions answered %q", text)
	}
	waitInbox(3)

	st, err := h.GatewayStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Channels) != 1 || st.Channels[0].State != demiurge.ChannelRunning || st.Channels[0].Inbox[demiurge.InboundDone] != 3 {
		t.Fatalf("status %+v", st)
	}
}

// A channel that cannot run is reported disabled with its reason; with
// none left, the gateway does not start.
func TestGatewayDisabledChannels(t *testing.T) {
	home := t.TempDir()
	h0, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h0.Close(context.Background())
	path := filepath.Join(home, "agents", "assistant", "agent.yaml")
	b, _ := os.ReadFile(path)
	yaml := strings.Replace(string(b), "channels: {}\n", "channels:\n  webhook:\n    enabled: true\n    token_env: NO_SUCH_TOKEN_VAR\n  matrix:\n    enabled: true\n", 1)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(context.Background(), host.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	report, err := h.StartGateway(context.Background(), host.GatewayOptions{})
	if demiurge.ErrorCode(err) != demiurge.ECONFIG || len(report) != 2 {
		t.Fatalf("start: %v %+v", err, report)
	}
	want := "no gateway channel can run: assistant/matrix: unsupported enabled gateway channel: matrix; " +
		"assistant/webhook: webhook channel requires token_env with a value, token, or allow_unauthenticated: true"
	if demiurge.ErrorMessage(err) != want {
		t.Fatalf("error %q\nwant %q", demiurge.ErrorMessage(err), want)
	}
	st, err := h.GatewayStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Channels) != 2 || st.Channels[0].State != demiurge.ChannelDisabled || st.Channels[1].LastError == "" {
		t.Fatalf("status %+v", st)
	}
}

// doctor names an enabled channel that cannot run, with its reason.
func TestDoctorChecksChannels(t *testing.T) {
	home := t.TempDir()
	h0, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h0.Close(context.Background())
	enableWebhook(t, home, "    callback_url: https://10.0.0.5/hook\n")
	rep, err := host.Doctor(context.Background(), host.DoctorOptions{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range rep.Findings {
		if f.Code == "channel.invalid" {
			found = append(found, f.Message)
		}
	}
	want := "channel webhook of core assistant cannot run: webhook channel webhook: callback URL rejected by Host policy: private_address"
	if len(found) != 1 || found[0] != want || rep.OK {
		t.Fatalf("channel findings %q (ok=%v), want %q", found, rep.OK, want)
	}
}

// writeChannels replaces the assistant core's empty channels block.
func writeChannels(t testing.TB, home, block string) {
	t.Helper()
	path := filepath.Join(home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(b), "channels: {}\n", "channels:\n"+block, 1)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

const botToken = "123456:ABCdefGhIJKlmnoPQRstuVWXyz"

func telegramBlock(apiURL string) string {
	return "  telegram:\n    enabled: true\n    bot_token: " + botToken + "\n    api_base_url: " + apiURL +
		"\n    allowed_users: [42]\n    poll_timeout: 1\n"
}

func initHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h.Close(context.Background())
	return home
}

// CH-04 end to end: while the Bot API answers getUpdates with 500, the
// Telegram channel is retried on its own (status retrying, the error
// without the token) and the webhook channel's messages are answered;
// once Telegram recovers, its message is answered in MarkdownV2.
func TestGatewayTelegramFailingDoesNotStallWebhook(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, botToken)
	api.Fail500(1000)
	home := initHome(t)
	writeChannels(t, home, "  webhook:\n    enabled: true\n    token: tok-123456789\n    allow_private_callback_urls: true\n"+telegramBlock(api.URL()))
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := host.WithWebhookListener(host.GatewayOptions{Drain: 5 * time.Second,
		Inbox: gateway.Options{ChannelBackoff: 20 * time.Millisecond, ChannelBackoffMax: 100 * time.Millisecond}},
		func(string, string) net.Listener { return ln })
	if _, err := h.StartGateway(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/demiurge"
	cb, got := callbacks(t)
	if status, _ := postJSON(t, url, map[string]any{"text": "hi", "source": "ci", "callback_url": cb.URL}); status != 202 {
		t.Fatalf("webhook: %d", status)
	}
	if m := nextCallback(t, got); m["text"] != "[fake] hi" {
		t.Fatalf("webhook reply %v", m)
	}
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := h.GatewayStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var tg host.GatewayChannelStatus
		for _, c := range st.Channels {
			if c.Name == "telegram" {
				tg = c
			}
		}
		if tg.State == demiurge.ChannelRetrying && tg.LastError == "telegram getUpdates failed (500): Internal Server Error" {
			break
		}
		if strings.Contains(tg.LastError, botToken) {
			t.Fatalf("the token leaked into the status: %q", tg.LastError)
		}
		if time.Now().After(deadline) {
			t.Fatalf("telegram status %+v", tg)
		}
		time.Sleep(20 * time.Millisecond)
	}
	api.Fail500(0)
	api.Push(demiurgetest.TelegramPrivateText(42, "hello"))
	api.WaitCall("sendMessage", func(p map[string]string) bool {
		return p["chat_id"] == "42" && p["text"] == `\[fake\] hello` && p["parse_mode"] == "MarkdownV2"
	})
	logs, err := os.ReadFile(filepath.Join(home, "logs", "host.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(logs), botToken) || strings.Contains(string(logs), "tok-123456789") {
		t.Fatal("a channel credential reached the Host log")
	}
}

// An approval question of a Telegram turn is answered with the inline
// keyboard by the user who wrote: the tool then runs and the turn answers.
func TestGatewayTelegramApproval(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, botToken)
	home := initHome(t)
	writeChannels(t, home, telegramBlock(api.URL()))
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`[{"tool_calls":[{"id":"c1","name":"write_file","arguments":{"path":"note.txt","content":"from telegram"}}]},{"content":"written"}]`), 0o600)
	h, err := host.Open(context.Background(), host.Options{Home: home, FakeScript: script})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.StartGateway(context.Background(), host.GatewayOptions{Drain: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	api.Push(demiurgetest.TelegramPrivateText(42, "write a note"))
	q := api.WaitCall("sendMessage", func(p map[string]string) bool { return strings.Contains(p["reply_markup"], "approval:1:allow") })
	if !strings.Contains(q.Params["text"], "write\\_file") {
		t.Fatalf("question %q", q.Params["text"])
	}
	api.Push(demiurgetest.TelegramCallback(42, "approval:1:allow", 101))
	api.WaitCall("sendMessage", func(p map[string]string) bool { return p["text"] == "written" })
	b, err := os.ReadFile(filepath.Join(home, "workspace", "note.txt"))
	if err != nil || string(b) != "from telegram" {
		t.Fatalf("note %q %v", b, err)
	}
}

// A schedule that delivers to a channel target: its run's reply reaches
// the webhook's delivery_targets entry (the channel built for delivery
// only, no gateway running) and a Telegram chat (through the running
// gateway's channel).
func TestScheduleDeliversToChannels(t *testing.T) {
	api := demiurgetest.NewBotAPI(t, botToken)
	cb, got := callbacks(t)
	home := initHome(t)
	writeChannels(t, home, "  webhook:\n    token: tok-123456789\n    allow_private_callback_urls: true\n    delivery_targets: {ops: \""+cb.URL+"/ops\"}\n"+telegramBlock(api.URL()))
	dir := filepath.Join(home, "agents", "assistant", "agent", "schedules")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "hook.yaml"), []byte("schedule: \"0 8 * * 1\"\nprompt: weekly report\ndelivery:\n  mode: webhook\n  target: ops\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "chat.yaml"), []byte("schedule: \"0 9 * * 1\"\nprompt: chat report\ndelivery:\n  mode: telegram\n  chat_id: 42\n"), 0o600)
	h, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	if _, err := h.RunSchedule(ctx, "assistant", "hook"); err != nil {
		t.Fatal(err)
	}
	if m := nextCallback(t, got); m["text"] != "[fake] weekly report" || m["source"] != "ops" {
		t.Fatalf("webhook schedule delivery %v", m)
	}
	if _, err := h.StartGateway(ctx, host.GatewayOptions{Drain: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.RunSchedule(ctx, "assistant", "chat"); err != nil {
		t.Fatal(err)
	}
	api.WaitCall("sendMessage", func(p map[string]string) bool { return p["chat_id"] == "42" && p["text"] == `\[fake\] chat report` })
}

// Email end to end against real IMAP and SMTP servers on loopback: mail
// from an allowed sender becomes a turn, the reply is mailed back threaded
// under it; the passwords come from the environment only.
func TestGatewayEmailEndToEnd(t *testing.T) {
	m := demiurgetest.StartMail(t)
	ih, ip := demiurgetest.HostPort(m.IMAPAddr)
	sh, sp := demiurgetest.HostPort(m.SMTPAddr)
	home := initHome(t)
	writeChannels(t, home, fmt.Sprintf("  email:\n    enabled: true\n    imap_host: %s\n    imap_port: %d\n    smtp_host: %s\n    smtp_port: %d\n"+
		"    imap_username: %s\n    smtp_username: %s\n    allowed_senders: [alice@example.org]\n    trust_from_headers: true\n    poll_interval: 1\n",
		ih, ip, sh, sp, demiurgetest.MailUser, demiurgetest.MailUser))
	env := map[string]string{"DEMIURGE_IMAP_PASSWORD": demiurgetest.MailIMAPPassword, "DEMIURGE_SMTP_PASSWORD": demiurgetest.MailSMTPPassword}
	h, err := host.Open(context.Background(), host.Options{Home: home, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.StartGateway(context.Background(), host.WithMailTLS(host.GatewayOptions{Drain: 5 * time.Second}, m.ClientTLS)); err != nil {
		t.Fatal(err)
	}
	m.Deliver("From: Alice <alice@example.org>\r\nTo: bot@example.com\r\nSubject: Build\r\nMessage-ID: <m1@example.org>\r\n\r\nIs it green?\r\n")
	deadline := time.Now().Add(20 * time.Second)
	for len(m.Sent()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no reply mailed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := m.Sent()[0]
	if sent.To != "alice@example.org" || !strings.Contains(string(sent.Data), "In-Reply-To: <m1@example.org>") ||
		!strings.Contains(string(sent.Data), "[fake] Is it green?") {
		t.Fatalf("reply %s", sent.Data)
	}
}

// A core's runtime.workspace is where its channel conversations work.
func TestGatewayTurnsWorkInTheCoresWorkspace(t *testing.T) {
	home := t.TempDir()
	h0, err := host.Open(context.Background(), host.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h0.Close(context.Background())
	enableWebhook(t, home, "    allow_private_callback_urls: true\n")
	coreWS := filepath.Join(t.TempDir(), "core-ws")
	path := filepath.Join(home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "  workspace: null\n", "  workspace: "+coreWS+"\n", 1)
	if y == string(b) {
		t.Fatal("agent.yaml has no runtime.workspace: null")
	}
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	h, url := gatewayHost(t, home)
	cb, got := callbacks(t)
	if status, resp := postJSON(t, url, map[string]any{"text": "hello", "source": "ws", "callback_url": cb.URL}); status != 202 {
		t.Fatalf("POST: %d %s", status, resp)
	}
	if m := nextCallback(t, got); m["text"] != "[fake] hello" {
		t.Fatalf("callback %v", m)
	}
	sessions, err := h.ListSessions(context.Background(), "assistant", 10)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v", sessions, err)
	}
	if sessions[0].Workspace != coreWS {
		t.Fatalf("the conversation's session works in %q, want the core's %q", sessions[0].Workspace, coreWS)
	}
}
