package webhook_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/channels/webhook"
	"github.com/demiurge/demiurge/urlpolicy"
)

// inbox records what the channel accepted; fail makes Accept fail.
type inbox struct {
	mu   sync.Mutex
	envs []demiurge.InboundEnvelope
	fail bool
}

func (b *inbox) Accept(_ context.Context, envs []demiurge.InboundEnvelope, _ string) ([]demiurge.InboxReceipt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "database is locked")
	}
	b.envs = append(b.envs, envs...)
	return []demiurge.InboxReceipt{{InboundID: "inbound_1"}}, nil
}

func (b *inbox) accepted() []demiurge.InboundEnvelope {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]demiurge.InboundEnvelope(nil), b.envs...)
}

// serve runs the channel on a loopback listener until the test ends and
// returns its URL.
func serve(t *testing.T, cfg webhook.Config, in webhook.Inbox) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener = ln
	if cfg.Path == "" {
		cfg.Path = "/demiurge"
	}
	ch, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, in) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		ch.Close()
	})
	return "http://" + ln.Addr().String()
}

func post(t *testing.T, url, ctype, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	return resp.StatusCode, string(b)
}

// The inbound HTTP contract: statuses and messages exactly, nothing
// accepted on any refusal.
func TestWebhookInboundContract(t *testing.T) {
	in := &inbox{}
	base := serve(t, webhook.Config{Name: "webhook", Token: "s3cret", AllowedSources: []string{"ci", "10.0.0.1"}}, in)
	url := base + "/demiurge"
	const js = "application/json"
	for _, tt := range []struct {
		name, url, ctype, body string
		headers                []string
		status                 int
		resp                   string
	}{
		{"no token", url, js, `{"text":"hi","source":"ci"}`, nil, 401, `{"error":"unauthorized"}`},
		{"wrong bearer", url, js, `{"text":"hi","source":"ci"}`, []string{"Authorization", "Bearer nope"}, 401, `{"error":"unauthorized"}`},
		{"wrong path", base + "/other", js, `{}`, nil, 404, `{"error":"not found"}`},
		{"non-object JSON", url, js, `[1,2]`, nil, 400, `{"error":"JSON webhook body must be an object"}`},
		{"non-object untyped", url, "text/plain", `"just a string"`, nil, 400, `{"error":"webhook body must be an object"}`},
		{"invalid JSON", url, js, `{"text":`, nil, 400, `{"error":"invalid JSON: unexpected end of JSON input"}`},
		{"multipart", url, "multipart/form-data; boundary=x", "--x--", nil, 415, `{"error":"unsupported content type"}`},
		{"no text", url, js, `{"source":"ci","token":"s3cret"}`, nil, 400, `{"error":"webhook text is required"}`},
		{"source not allowed", url, js, `{"text":"hi","source":"evil","token":"s3cret"}`, nil, 400, `{"error":"webhook text is required"}`},
		{"private callback", url, js, `{"text":"hi","source":"ci","callback_url":"https://127.0.0.1/cb"}`, []string{"X-Demiurge-Token", "s3cret"},
			400, `{"error":"callback URL rejected by Host policy: private_address"}`},
		{"http callback", url, js, `{"text":"hi","source":"ci","callback_url":"http://example.com/cb"}`, []string{"X-Demiurge-Token", "s3cret"},
			400, `{"error":"callback URL must be https and include a hostname"}`},
		{"too large", url, js, `{"text":"` + strings.Repeat("x", webhook.MaxBody) + `"}`, nil, 413, `{"error":"request body too large"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, tt.url, tt.ctype, tt.body, tt.headers...)
			if status != tt.status || body != tt.resp {
				t.Fatalf("got %d %s, want %d %s", status, body, tt.status, tt.resp)
			}
		})
	}
	if got := in.accepted(); len(got) != 0 {
		t.Fatalf("refused requests were accepted: %+v", got)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 501 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

// A bad Content-Length is refused before the body is read.
func TestWebhookInvalidContentLength(t *testing.T) {
	base := serve(t, webhook.Config{Name: "webhook", Token: "s3cret"}, &inbox{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /demiurge HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\nContent-Type: application/json\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || string(b) != `{"error":"request body too large"}` {
		t.Fatalf("got %d %s", resp.StatusCode, b)
	}
}

// Accepted requests: each authentication form, the envelope's fields, the
// exact 202 body; an inbox failure is 503 and acknowledges nothing.
func TestWebhookAccepts(t *testing.T) {
	in := &inbox{}
	url := serve(t, webhook.Config{Name: "webhook", Token: "s3cret"}, in) + "/demiurge?ignored=1"
	status, body := post(t, url, "application/json", `{"prompt":" hello ","user":"ci bot","request_id":"r-1","metadata":{"k":"v"}}`,
		"Authorization", "Bearer s3cret")
	if status != 202 || body != `{"conversation_key":"webhook:source:ci%20bot","ok":true}` {
		t.Fatalf("got %d %s", status, body)
	}
	status, _ = post(t, url, "application/x-www-form-urlencoded", "text=form+text&token=s3cret&conversation_key=custom:key")
	if status != 202 {
		t.Fatalf("form: %d", status)
	}
	status, _ = post(t, url, "text/plain", "raw words", "X-Demiurge-Token", "s3cret", "Idempotency-Key", "abc", "X-Api-Key", "k-123")
	if status != 202 {
		t.Fatalf("plain: %d", status)
	}
	got := in.accepted()
	if len(got) != 3 {
		t.Fatalf("accepted %d", len(got))
	}
	e := got[0]
	if e.Text != "hello" || e.Source != "ci bot" || e.ReplyTo != "r-1" || e.EventKey != "id:r-1" || e.PrincipalKey != "configured-token" || e.Metadata["k"] != "v" {
		t.Fatalf("envelope %+v", e)
	}
	headers := e.Metadata["webhook_headers"].(map[string]any)
	if _, leaked := headers["authorization"]; leaked {
		t.Fatal("the Authorization header reached the metadata")
	}
	if got[1].Text != "form text" || got[1].ConversationKey != "custom:key" || got[1].Source != "127.0.0.1" {
		t.Fatalf("form envelope %+v", got[1])
	}
	if got[2].Text != "raw words" || got[2].EventKey != "id:abc" || got[2].ConversationKey != "webhook:source:127.0.0.1" {
		t.Fatalf("plain envelope %+v", got[2])
	}
	for name := range got[2].Metadata["webhook_headers"].(map[string]any) {
		if name == "x-api-key" || name == "x-demiurge-token" {
			t.Fatalf("the credential header %s reached the metadata", name)
		}
	}
	in.fail = true
	if status, body := post(t, url, "application/json", `{"text":"x","token":"s3cret"}`); status != 503 || body != `{"error":"inbox unavailable"}` {
		t.Fatalf("inbox failure: %d %s", status, body)
	}
}

func TestWebhookConfigErrors(t *testing.T) {
	if _, err := webhook.New(webhook.Config{Name: "webhook"}); err == nil || err.Error() != "webhook channel requires token_env with a value, token, or allow_unauthenticated: true" {
		t.Fatalf("no token: %v", err)
	}
	if _, err := webhook.New(webhook.Config{Name: "webhook", Token: "t", CallbackURL: "https://10.1.2.3/x"}); demiurge.ErrorCode(err) != demiurge.ECONFIG ||
		!strings.Contains(err.Error(), "callback URL rejected by Host policy: private_address") {
		t.Fatalf("private callback: %v", err)
	}
	if _, err := webhook.New(webhook.Config{Name: "webhook", AllowUnauthenticated: true}); err != nil {
		t.Fatal(err)
	}
}

// Replies: posted to the request's callback with the spec's body and an
// HMAC signature; a private callback needs allow_private_callback_urls;
// no redirect is followed for a public one; 5xx is retryable.
func TestWebhookSend(t *testing.T) {
	type got struct {
		body      map[string]any
		signature string
		raw       []byte
		ts        string
	}
	calls := make(chan got, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(raw, &m)
		calls <- got{body: m, signature: r.Header.Get("X-Demiurge-Signature"), raw: raw, ts: r.Header.Get("X-Demiurge-Timestamp")}
		if m["text"] == "fail" {
			w.WriteHeader(502)
		}
	}))
	defer srv.Close()
	ch, err := webhook.New(webhook.Config{Name: "webhook", Token: "t", AllowPrivateCallbacks: true, CallbackSecret: "hmac-key",
		DeliveryTargets: map[string]string{"ops": srv.URL + "/ops"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	ctx := context.Background()
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "ops", ReplyTo: "r-1"}}
	if err := ch.Send(ctx, to, demiurge.Outbound{Text: "hello back"}); err != nil {
		t.Fatal(err)
	}
	c := <-calls
	if c.body["channel"] != "webhook" || c.body["source"] != "ops" || c.body["reply_to"] != "r-1" || c.body["text"] != "hello back" {
		t.Fatalf("callback body %v", c.body)
	}
	if want := webhook.Sign("hmac-key", c.ts, c.raw); !hmac.Equal([]byte(c.signature), []byte(want)) || c.ts == "" {
		t.Fatalf("signature %q, want %q", c.signature, want)
	}
	err = ch.Send(ctx, to, demiurge.Outbound{Text: "fail"})
	<-calls
	if demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE || !strings.Contains(err.Error(), "HTTP 502 for http://127.0.0.1:") {
		t.Fatalf("5xx: %v", err)
	}
	if err := ch.Send(ctx, demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "nobody"}}, demiurge.Outbound{Text: "x"}); err != nil {
		t.Fatalf("no callback: %v", err)
	}

	// Without allow_private_callback_urls, the Host policy decides: the
	// strict default refuses loopback at connect; a policy that admits
	// loopback (a Host option) reaches a TLS callback, but not through a
	// redirect.
	strict, err := webhook.New(webhook.Config{Name: "webhook", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		calls <- got{}
	}))
	defer tlsSrv.Close()
	public := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "x",
		Metadata: map[string]any{"webhook_callback_url": tlsSrv.URL + "/cb"}}}
	if err := strict.Send(ctx, public, demiurge.Outbound{Text: "x"}); err == nil || !strings.Contains(err.Error(), "callback URL rejected by Host policy: private_address") {
		t.Fatalf("loopback under the strict policy: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	loopback := urlpolicy.Policy{AllowPrivatePrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	admitted, err := webhook.New(webhook.Config{Name: "webhook", Token: "t", URLPolicy: loopback, TLS: &tls.Config{RootCAs: pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer admitted.Close()
	if err := admitted.Send(ctx, public, demiurge.Outbound{Text: "x"}); err != nil {
		t.Fatalf("TLS loopback callback: %v", err)
	}
	select {
	case <-calls:
	case <-time.After(5 * time.Second):
		t.Fatal("no TLS callback")
	}
	public.Metadata["webhook_callback_url"] = tlsSrv.URL + "/moved"
	if err := admitted.Send(ctx, public, demiurge.Outbound{Text: "x"}); err == nil || !strings.Contains(err.Error(), "HTTP redirect is not allowed for callback URL: https://127.0.0.1:") {
		t.Fatalf("redirect: %v", err)
	}
}
