// Package webhook is the HTTP webhook channel (spec surfaces §3.9 and
// §3.14): an HTTP server that accepts POSTed messages into the channel
// inbox and answers 202 only after the durable accept, and a client that
// posts replies to a callback URL through the Host URL policy.
//
// It is an adapter (a leaf): it knows the Inbox it hands messages to only
// by the interface it declares, and the composition root builds its
// Config from the core's channel block and the Host's options.
//
// # Inbound
//
// POST to the exact path (the query string is ignored; any other path is
// 404 {"error":"not found"}, any other method 501). The body (at most
// 1 MiB: 413 {"error":"request body too large"}; a bad Content-Length 400
// {"error":"invalid content length"}; read within 15 s, else 408
// {"error":"request body timed out"}) is parsed by content type:
// application/json must be an object (400 {"error":"JSON webhook body must
// be an object"}; invalid JSON 400 with the decoder's message),
// application/x-www-form-urlencoded gives its fields, multipart, binary and
// media types are 415 {"error":"unsupported content type"}, anything else
// is a JSON object if it parses as one (a JSON non-object is 400
// {"error":"webhook body must be an object"}) or else the text itself.
// Authentication, unless allow_unauthenticated: "Authorization: Bearer
// <token>", "X-Demiurge-Token: <token>" or a body field "token", compared
// in constant time; else 401 {"error":"unauthorized"}. Fields: text or
// prompt (required: 400 {"error":"webhook text is required"}, also for a
// source outside a non-empty allowed_sources), source or user (default the
// client IP), conversation_key (default webhook:source:<source>),
// metadata, callback_url or response_url (checked against the URL policy:
// 400 with the reason), reply_to or request_id. The platform event key
// (the inbox's dedup key) is the Idempotency-Key header, else request_id,
// else message_id; a request without one is a new message every time.
// Success is 202 {"ok":true,"conversation_key":<key>} once the message is
// committed (a duplicate gets the same answer and is not admitted again);
// an inbox failure is 503 {"error":"inbox unavailable"} and nothing is
// acknowledged.
//
// # Outbound
//
// A reply POSTs {"channel":"webhook","source","reply_to","text"} to the
// request's callback URL, else the configured callback_url, else
// delivery_targets[<source>]; with none the reply is dropped. Callbacks go
// through the Host URL policy's transport (every connection judged, DNS
// rebinding included): https only and no redirects (`HTTP redirect is not
// allowed for callback URL: <target>`), unless allow_private_callback_urls,
// which admits http and private (never metadata) addresses and follows
// judged redirects. With a callback secret every callback carries
// X-Demiurge-Timestamp: <unix seconds> and X-Demiurge-Signature:
// sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/redact"
	"github.com/demiurge/demiurge/urlpolicy"
)

// Limits of the inbound HTTP server.
const (
	MaxBody         = 1 << 20
	BodyReadTimeout = 15 * time.Second
	CallbackTimeout = 30 * time.Second
)

// Inbox is what the channel hands accepted messages to: Accept returns
// once they are durably committed.
type Inbox interface {
	Accept(ctx context.Context, envs []demiurge.InboundEnvelope, cursor string) ([]demiurge.InboxReceipt, error)
}

// Config configures one webhook channel.
type Config struct {
	Name string // the channel's configured name
	// Addr is host:port to listen on; Listener, when set, is used instead
	// (tests pass a loopback listener on port 0).
	Addr     string
	Listener net.Listener
	Path     string

	Token                 string // required unless AllowUnauthenticated
	AllowUnauthenticated  bool
	CallbackURL           string
	AllowPrivateCallbacks bool
	AllowedSources        []string
	DeliveryTargets       map[string]string
	CallbackSecret        string

	// URLPolicy is the Host's URL policy (a Host option; nothing a core
	// declares reaches it). TLS, when set, is the callbacks' TLS client
	// configuration (tests trust their own certificate authority).
	URLPolicy urlpolicy.Policy
	TLS       *tls.Config
	Logger    *slog.Logger
}

// Channel is one webhook channel. Run serves it; Send posts replies. It is
// safe for concurrent use.
type Channel struct {
	cfg    Config
	client *http.Client
	policy urlpolicy.Policy
}

// New checks cfg and returns the channel. Errors (ECONFIG) use the spec's
// messages: no token and not allow_unauthenticated, a configured callback
// URL the policy refuses.
func New(cfg Config) (*Channel, error) {
	if cfg.Token == "" && !cfg.AllowUnauthenticated {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "webhook channel requires token_env with a value, token, or allow_unauthenticated: true")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Path == "" {
		cfg.Path = "/demiurge"
	}
	c := &Channel{cfg: cfg, policy: cfg.URLPolicy}
	if cfg.AllowPrivateCallbacks {
		c.policy.AllowPrivate = true
	}
	tr := c.policy.Transport()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS.Clone()
	}
	c.client = &http.Client{Transport: tr, Timeout: CallbackTimeout, CheckRedirect: c.redirect}
	if cfg.CallbackURL != "" {
		if err := c.checkCallback(cfg.CallbackURL); err != nil {
			return nil, demiurge.WrapError(demiurge.ECONFIG, err, "webhook channel %s: %s", cfg.Name, demiurge.ErrorMessage(err))
		}
	}
	for name, target := range cfg.DeliveryTargets {
		if err := c.checkCallback(target); err != nil {
			return nil, demiurge.WrapError(demiurge.ECONFIG, err, "webhook channel %s: delivery_targets.%s: %s", cfg.Name, name, demiurge.ErrorMessage(err))
		}
	}
	return c, nil
}

// Close releases the callback client's idle connections.
func (c *Channel) Close() { c.client.CloseIdleConnections() }

// checkCallback is the verdict on a callback URL that needs no I/O (its
// addresses are judged when the callback connects).
func (c *Channel) checkCallback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(c.cfg.AllowPrivateCallbacks && u.Scheme == "http")) {
		return demiurge.Errorf(demiurge.EINVALID, "callback URL must be https and include a hostname")
	}
	if d := c.policy.Check(raw); !d.Allowed {
		return demiurge.Errorf(demiurge.EINVALID, "callback URL rejected by Host policy: %s", d.Reason)
	}
	return nil
}

func (c *Channel) redirect(req *http.Request, via []*http.Request) error {
	if !c.cfg.AllowPrivateCallbacks {
		return demiurge.Errorf(demiurge.EINVALID, "HTTP redirect is not allowed for callback URL: %s", urlpolicy.AuditURL(req.URL.String()))
	}
	return c.policy.CheckRedirect(req, via)
}

// Run serves the webhook until ctx ends, then shuts the server down
// (requests in flight get 5 s). A listen failure is returned at once.
func (c *Channel) Run(ctx context.Context, inbox Inbox) error {
	ln := c.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", c.cfg.Addr); err != nil {
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "webhook channel %s cannot listen on %s: %s", c.cfg.Name, c.cfg.Addr, demiurge.IOReason(err))
		}
	}
	srv := &http.Server{Handler: c.Handler(inbox), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(c.cfg.Logger.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "webhook channel %s stopped serving", c.cfg.Name)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}

// Handler returns the channel's HTTP handler over inbox.
func (c *Channel) Handler(inbox Inbox) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "DemiurgeWebhook/1.0")
		if r.URL.Path != c.cfg.Path {
			reply(w, http.StatusNotFound, map[string]any{"error": "not found"})
			return
		}
		if r.Method != http.MethodPost {
			reply(w, http.StatusNotImplemented, map[string]any{"error": "unsupported method"})
			return
		}
		body, status, msg := readBody(w, r)
		if status != 0 {
			reply(w, status, map[string]any{"error": msg})
			return
		}
		env, err := c.envelope(r, body)
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				reply(w, he.status, map[string]any{"error": he.msg})
				return
			}
			reply(w, http.StatusBadRequest, map[string]any{"error": demiurge.ErrorMessage(err)})
			return
		}
		if _, err := inbox.Accept(r.Context(), []demiurge.InboundEnvelope{env}, ""); err != nil {
			c.cfg.Logger.Warn("webhook accept failed", "channel", c.cfg.Name, "err", demiurge.ErrorMessage(err))
			reply(w, http.StatusServiceUnavailable, map[string]any{"error": "inbox unavailable"})
			return
		}
		reply(w, http.StatusAccepted, map[string]any{"ok": true, "conversation_key": env.ConversationKey})
	})
}

type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func reply(w http.ResponseWriter, status int, body map[string]any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// readBody reads the request body within the limits; status is 0 when it
// was read.
func readBody(w http.ResponseWriter, r *http.Request) (map[string]any, int, string) {
	if cl := r.Header.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			return nil, http.StatusBadRequest, "invalid content length"
		}
		if n > MaxBody {
			return nil, http.StatusRequestEntityTooLarge, "request body too large"
		}
	}
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	media, _, _ := mime.ParseMediaType(ct)
	if strings.HasPrefix(media, "multipart/") || strings.HasPrefix(media, "image/") || strings.HasPrefix(media, "audio/") ||
		strings.HasPrefix(media, "video/") || media == "application/octet-stream" {
		return nil, http.StatusUnsupportedMediaType, "unsupported content type"
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(BodyReadTimeout))
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooLarge):
			return nil, http.StatusRequestEntityTooLarge, "request body too large"
		case errors.As(err, &ne) && ne.Timeout():
			return nil, http.StatusRequestTimeout, "request body timed out"
		}
		return nil, http.StatusBadRequest, "request body could not be read"
	}
	switch {
	case strings.Contains(ct, "application/json"):
		if len(bytes.TrimSpace(raw)) == 0 {
			return map[string]any{}, 0, ""
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, http.StatusBadRequest, "invalid JSON: " + err.Error()
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, http.StatusBadRequest, "JSON webhook body must be an object"
		}
		return obj, 0, ""
	case strings.Contains(ct, "application/x-www-form-urlencoded"):
		vals, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, http.StatusBadRequest, "invalid form body"
		}
		obj := map[string]any{}
		for k, vs := range vals {
			if len(vs) == 1 {
				obj[k] = vs[0]
				continue
			}
			l := make([]any, len(vs))
			for i, v := range vs {
				l[i] = v
			}
			obj[k] = l
		}
		return obj, 0, ""
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, 0, ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err == nil {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, http.StatusBadRequest, "webhook body must be an object"
		}
		return obj, 0, ""
	}
	return map[string]any{"text": strings.ToValidUTF8(string(raw), "\uFFFD")}, 0, ""
}

// authHeaders, and every header whose name is a credential's
// (redact.SensitiveField: X-Api-Key, X-Hub-Signature, …), are never copied
// into the inbound's metadata, which is persisted.
var authHeaders = map[string]bool{"authorization": true, "x-demiurge-token": true, "cookie": true, "proxy-authorization": true}

// envelope authenticates the request and builds its envelope.
func (c *Channel) envelope(r *http.Request, body map[string]any) (demiurge.InboundEnvelope, error) {
	client := clientIP(r)
	principal := "configured-token"
	if c.cfg.AllowUnauthenticated {
		principal = "client:" + cmpOr(client, "unknown")
	} else if !c.authenticated(r, body) {
		return demiurge.InboundEnvelope{}, &httpError{http.StatusUnauthorized, "unauthorized"}
	}
	text := strings.TrimSpace(firstString(body, "text", "prompt"))
	source := strings.TrimSpace(firstString(body, "source", "user"))
	if source == "" {
		source = cmpOr(client, "webhook")
	}
	if text == "" || (len(c.cfg.AllowedSources) > 0 && !slices.Contains(c.cfg.AllowedSources, source)) {
		return demiurge.InboundEnvelope{}, &httpError{http.StatusBadRequest, "webhook text is required"}
	}
	key := strings.TrimSpace(firstString(body, "conversation_key"))
	if key == "" {
		key = "webhook:source:" + demiurge.PercentEncode(source)
	}
	meta := map[string]any{}
	if m, ok := body["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	headers := map[string]any{}
	for name, vs := range r.Header {
		n := strings.ToLower(name)
		if !authHeaders[n] && !redact.SensitiveField(n) {
			headers[n] = strings.Join(vs, ", ")
		}
	}
	meta["webhook_source"], meta["webhook_client"], meta["webhook_headers"] = source, client, headers
	if cb := strings.TrimSpace(firstString(body, "callback_url", "response_url")); cb != "" {
		if err := c.checkCallback(cb); err != nil {
			return demiurge.InboundEnvelope{}, err
		}
		meta["webhook_callback_url"] = cb
	}
	replyTo := firstString(body, "reply_to", "request_id")
	eventKey := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if eventKey == "" {
		eventKey = strings.TrimSpace(firstString(body, "request_id", "message_id"))
	}
	if eventKey == "" {
		eventKey = demiurge.NewID("req")
	} else {
		eventKey = "id:" + eventKey
	}
	return demiurge.InboundEnvelope{EventKey: eventKey, ConversationKey: key, PrincipalKey: principal, Source: source,
		ReplyTo: replyTo, Text: text, Metadata: meta}, nil
}

func (c *Channel) authenticated(r *http.Request, body map[string]any) bool {
	want := []byte(c.cfg.Token)
	eq := func(got string) bool { return got != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1 }
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && eq(strings.TrimSpace(auth)) {
		return true
	}
	if eq(r.Header.Get("X-Demiurge-Token")) {
		return true
	}
	tok, _ := body["token"].(string)
	return eq(tok)
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	return host
}

func firstString(body map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := body[k].(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return v
			}
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Send posts out as the reply to the conversation of to. With no callback
// for it the reply is dropped (nil). Errors: EUNAVAILABLE when the
// callback could not be reached or answered 429 or 5xx (nothing was
// taken; the delivery may be retried), another error when it answered
// 4xx or was refused by the URL policy.
func (c *Channel) Send(ctx context.Context, to demiurge.Inbound, out demiurge.Outbound) error {
	text := out.Text
	if strings.TrimSpace(text) == "" {
		return nil
	}
	target := ""
	if cb, ok := to.Metadata["webhook_callback_url"].(string); ok {
		target = cb
	}
	if target == "" {
		target = c.cfg.CallbackURL
	}
	if target == "" {
		target = c.cfg.DeliveryTargets[to.Source]
	}
	if target == "" {
		return nil
	}
	if err := c.checkCallback(target); err != nil {
		return err
	}
	var replyTo any
	if to.ReplyTo != "" {
		replyTo = to.ReplyTo
	}
	body, err := json.Marshal(map[string]any{"channel": "webhook", "source": to.Source, "reply_to": replyTo, "text": text})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return demiurge.WrapError(demiurge.EINVALID, err, "callback URL must be https and include a hostname")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "DemiurgeWebhook/1.0")
	if c.cfg.CallbackSecret != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Header.Set("X-Demiurge-Timestamp", ts)
		req.Header.Set("X-Demiurge-Signature", Sign(c.cfg.CallbackSecret, ts, body))
	}
	audit := urlpolicy.AuditURL(target)
	resp, err := c.client.Do(req)
	if err != nil {
		var blocked *urlpolicy.BlockedError
		var coded *demiurge.Error
		switch {
		case errors.As(err, &blocked):
			return demiurge.WrapError(demiurge.EINVALID, err, "callback URL rejected by Host policy: %s", blocked.Decision.Reason)
		case errors.As(err, &coded):
			return coded
		case isDialError(err):
			return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "callback %s could not be reached", audit)
		}
		return demiurge.WrapError(demiurge.EINTERNAL, err, "callback %s failed", audit)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode >= 400 {
		code := demiurge.EINVALID
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			code = demiurge.EUNAVAILABLE
		}
		return demiurge.Errorf(code, "HTTP %d for %s: %s", resp.StatusCode, audit, strings.TrimSpace(strings.ToValidUTF8(string(snippet), "")))
	}
	return nil
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Sign is the callback signature: "sha256=" + hex HMAC-SHA256 of
// "<timestamp>.<body>" under secret. Receivers recompute it and compare in
// constant time.
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
