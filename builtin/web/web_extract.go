package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge/builtin/internal/htmltext"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/urlpolicy"
)

// web_extract limits and fixed request properties (spec tool-runtime §1.3).
const (
	webExtractUserAgent      = "demiurge/0.1"
	webExtractAction         = "fetch"
	webExtractDefaultTimeout = 20 // seconds
	webExtractMaxTimeout     = 60 // seconds
	// webExtractMaxBytes bounds the body bytes read, whatever max_chars
	// is: markup is dropped, so max_chars characters of text may need more
	// than max_chars bytes of HTML, but never more than this.
	webExtractMaxBytes = 1 << 20
)

func WebExtract(d Deps) effect.Definition {
	return effect.Definition{
		Name: "web_extract",
		Description: "Fetch an http:// or https:// URL and return the page title and its readable text " +
			"(HTML markup, scripts and styles removed). Hosts on private, local or cloud-metadata networks are refused.",
		Schema: tool.ObjectSchema(map[string]any{
			"url":             map[string]any{"type": "string", "description": "The http:// or https:// URL to fetch."},
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": webExtractMaxTimeout, "default": webExtractDefaultTimeout, "description": "Seconds to wait for the whole fetch."},
			"max_chars":       map[string]any{"type": "integer", "minimum": 1, "maximum": tool.OutputChars, "default": tool.OutputChars, "description": "Characters of text to return."},
		}, "url"),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		Capability:     "network.fetch",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter:        webExtractor{policy: d.URLPolicy}.adapter(),
	}
}

// webExtractor is the web_extract adapter (spec tool-runtime §1.3).
//
// Nothing leaves the machine before approval, not even a DNS query: the
// check before approval (Prepare) is the URL policy's literal Check
// (scheme, port, metadata and localhost names, literal addresses), which
// depends on the URL alone and so is made once; a refusal is never put to
// the operator and answers "URL blocked by Host policy: <reason>". The
// host name is resolved once the call is approved, by the policy's transport
// when it opens the connection: every answer is judged and only judged
// addresses are dialled. A refusal there, before the first request was
// sent, is "URL blocked by Host policy before request: <reason>" with
// executionStarted false; one on a redirect hop (a request was sent) is
// "URL blocked by Host policy: <reason>" with executionStarted true.
// Refusals are policy denials whose data carries the audit view only.
//
// The operator sees the URL reduced to scheme, host and a non-default
// port, in the summary, the target and the argument preview; never its
// userinfo, path, query or fragment.
//
// The request is a GET with User-Agent demiurge/0.1, no ambient proxy, no
// cookies, bounded by timeout_seconds (default 20, at most 60). At most
// webExtractMaxBytes of the body are read, and reading stops as soon as
// more than max_chars (default and maximum 12,000) characters of text are
// in hand. HTML becomes its title, a blank line and its visible text;
// other types are decoded as text. The result is the first max_chars
// characters exactly, with no marker; data.truncated says whether text
// was cut (spec: the original returns the first max_chars and reports
// truncated). A status outside 2xx is "web_extract failed: HTTP Error
// <code>: <text>"; a network error is "web_extract failed: <error>",
// never quoting the URL.
type webExtractor struct {
	policy urlpolicy.Policy
}

type webArgs struct {
	URL            string `json:"url"`
	TimeoutSeconds int64  `json:"timeout_seconds"`
	MaxChars       int64  `json:"max_chars"`
}

func (w webExtractor) adapter() tool.Typed[webArgs] {
	return tool.Typed[webArgs]{Call: w.prepare}
}

// prepare refuses a missing or non-http(s) URL and one the URL policy's
// literal check refuses, before any approval is asked and before anything
// is sent (no DNS query either).
func (w webExtractor) prepare(_ context.Context, _ effect.Invocation, a webArgs) (effect.Call, *effect.Outcome) {
	raw, out, ok := webExtractURL(a.URL)
	if !ok {
		return tool.Refuse(out)
	}
	d := w.policy.Check(raw)
	if !d.Allowed {
		return tool.Refuse(urlBlocked("URL blocked by Host policy: ", d, false))
	}
	return &webCall{w: w, raw: raw, first: d, args: a}, nil
}

// webCall is a fetch whose URL passed the literal check.
type webCall struct {
	w     webExtractor
	raw   string
	first urlpolicy.Decision
	args  webArgs
}

// ApprovalFacts describe the fetch to the operator by its audit target
// only (scheme, host, port): the summary, the target and the argument
// preview; the rule key binds a session grant to the exact URL.
func (c *webCall) ApprovalFacts() effect.ApprovalFacts {
	target := urlpolicy.AuditURL(c.raw)
	sum := sha256.Sum256([]byte(c.raw))
	return effect.ApprovalFacts{
		Action:   webExtractAction,
		Target:   target,
		Summary:  "Extract URL from " + target,
		Preview:  map[string]any{"url": target},
		RuleKey:  effect.RuleKey("web_extract:network.fetch:" + hex.EncodeToString(sum[:])),
		Baseline: policy.Prompt,
		Risk:     "high", // the question's risk; the catalog entry stays medium (spec tool-runtime §1.3)
	}
}

// Run fetches the URL with the policy's client and returns its readable
// text.
func (c *webCall) Run(ctx context.Context) (effect.Outcome, error) {
	timeout := time.Duration(tool.Positive(c.args.TimeoutSeconds, webExtractDefaultTimeout, webExtractMaxTimeout)) * time.Second
	maxChars := int(tool.Positive(c.args.MaxChars, tool.OutputChars, tool.OutputChars))
	return c.w.fetch(ctx, c.raw, c.first, timeout, maxChars)
}

// fetch GETs raw and extracts its text. final tracks the decision on the
// URL the response came from (the last redirect target); dials records
// the dialer's decisions, whose addresses complete the audit.
func (w webExtractor) fetch(ctx context.Context, raw string, first urlpolicy.Decision, timeout time.Duration, maxChars int) (effect.Outcome, error) {
	client := w.policy.Client(timeout)
	defer client.CloseIdleConnections()
	final, sent := first, false
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		sent = true // a response came back: a request was sent
		d, err := w.policy.EvaluateRedirect(req, via)
		if err == nil {
			final = d
		}
		return err
	}
	dials := &dialLog{}
	req, err := http.NewRequestWithContext(urlpolicy.WithDialObserver(ctx, dials.record), http.MethodGet, raw, nil)
	if err != nil {
		return tool.Invalid("web_extract failed: %v", err), nil
	}
	req.Header.Set("User-Agent", webExtractUserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")

	resp, err := client.Do(req)
	if err != nil {
		return fetchFailed(ctx, err, nil, final, sent)
	}
	defer resp.Body.Close()
	final = dials.complete(final)
	data := map[string]any{
		"url":          final.Target(),
		"url_policy":   final.Audit(),
		"status":       resp.StatusCode,
		"content_type": nullable(resp.Header.Get("Content-Type")),
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fetchFailed(ctx, fmt.Errorf("HTTP Error %d: %s", resp.StatusCode, statusText(resp)), data, final, true)
	}
	page, err := htmltext.Read(resp.Body, resp.Header.Get("Content-Type"), maxChars, webExtractMaxBytes)
	if err != nil {
		return fetchFailed(ctx, err, data, final, true)
	}
	content := page.Content()
	if content == "" {
		content = "(no readable text)"
	}
	data["truncated"] = page.Truncated
	data["charset"] = page.Charset
	if page.HTML {
		data["title"] = page.Title
	}
	return tool.Succeeded(content, data), nil
}

// dialLog keeps the dialer's latest decision per host and port.
type dialLog struct {
	mu   sync.Mutex
	last map[string]urlpolicy.Decision
}

func (l *dialLog) record(d urlpolicy.Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]urlpolicy.Decision{}
	}
	l.last[d.Target()] = d
}

// complete returns d (a literal decision on the URL the response came
// from) with the addresses the dialer judged for its host and port.
func (l *dialLog) complete(d urlpolicy.Decision) urlpolicy.Decision {
	if len(d.Resolved) > 0 {
		return d
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if dialed, ok := l.last[urlpolicy.Decision{Hostname: d.Hostname, Port: d.Port}.Target()]; ok {
		d.Resolved = dialed.Resolved
	}
	return d
}

// webExtractURL returns the trimmed url argument, or the outcome for a
// missing or non-http(s) one.
func webExtractURL(arg string) (string, effect.Outcome, bool) {
	raw := strings.TrimSpace(arg)
	if raw == "" {
		return "", tool.Invalid("url is required"), false
	}
	lower := strings.ToLower(raw)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return "", tool.Invalid("only http and https URLs are supported"), false
	}
	return raw, effect.Outcome{}, true
}

// urlBlocked is the policy denial of a URL: the message names the reason,
// data carries the audit view (never the path, query or userinfo).
func urlBlocked(prefix string, d urlpolicy.Decision, started bool) effect.Outcome {
	return effect.Outcome{
		IsError: true, Denial: "policy", ExecutionStarted: started,
		Content: prefix + d.Reason,
		Data:    map[string]any{"reason": d.Reason, "url_policy": d.Audit()},
	}
}

// fetchFailed turns a failed request into its outcome. A policy refusal
// met on the way is a denial: at the first connection, before any request
// was sent (sent false), it is the after-approval refusal ("before
// request", executionStarted false); on a redirect hop it is "URL blocked
// by Host policy: <reason>" with executionStarted true. A dial refusal
// carries no scheme; it takes the scheme of current, the URL being
// fetched, when it names the same host and port. Other errors are
// "web_extract failed: <error>" without the URL, which may carry secrets.
// A cancelled call is the caller's error.
func fetchFailed(ctx context.Context, err error, data map[string]any, current urlpolicy.Decision, sent bool) (effect.Outcome, error) {
	if ctx.Err() != nil {
		return effect.Outcome{}, ctx.Err()
	}
	var blocked *urlpolicy.BlockedError
	if errors.As(err, &blocked) {
		d := blocked.Decision
		if d.Scheme == "" && d.Hostname == current.Hostname && d.Port == current.Port {
			d.Scheme = current.Scheme
		}
		if !sent {
			return urlBlocked("URL blocked by Host policy before request: ", d, false), nil
		}
		return urlBlocked("URL blocked by Host policy: ", d, true), nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	out := tool.InvalidData(data, "web_extract failed: %v", err)
	out.ExecutionStarted = true
	return out, nil
}

func statusText(resp *http.Response) string {
	if _, text, ok := strings.Cut(resp.Status, " "); ok && text != "" {
		return text
	}
	return http.StatusText(resp.StatusCode)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Deps is what web_extract needs of the Host.
type Deps struct {
	// URLPolicy judges every URL web_extract fetches: before approval and
	// on every connection and redirect. The zero value is the strict
	// default (public addresses only, system DNS). Its AllowPrivate and
	// AllowPrivatePrefixes come from Host configuration only, never from
	// an Agent Core.
	URLPolicy urlpolicy.Policy
}
