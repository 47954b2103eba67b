package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/urlpolicy"
)

// web_extract limits and fixed request properties (spec tool-runtime §1.3).
const (
	webExtractUserAgent      = "demiurge/0.1"
	webExtractAction         = "web.fetch"
	webExtractDefaultTimeout = 20 // seconds
	webExtractMaxTimeout     = 60 // seconds
	// webExtractMaxBytes bounds the body bytes read, whatever max_chars
	// is: markup is dropped, so max_chars characters of text may need more
	// than max_chars bytes of HTML, but never more than this.
	webExtractMaxBytes = 1 << 20
)

func webExtract(d Deps) effect.Definition {
	return effect.Definition{
		Name: "web_extract",
		Description: "Fetch an http:// or https:// URL and return the page title and its readable text " +
			"(HTML markup, scripts and styles removed). Hosts on private, local or cloud-metadata networks are refused.",
		Schema: objectSchema(map[string]any{
			"url":             map[string]any{"type": "string", "description": "The http:// or https:// URL to fetch."},
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": webExtractMaxTimeout, "default": webExtractDefaultTimeout, "description": "Seconds to wait for the whole fetch."},
			"max_chars":       map[string]any{"type": "integer", "minimum": 1, "maximum": defaultToolOutputChars, "default": defaultToolOutputChars, "description": "Characters of text to return."},
		}, "url"),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		Capability:     "network.fetch",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter:        webExtractor{policy: d.URLPolicy},
	}
}

// webExtractor is the web_extract adapter (spec tool-runtime §1.3).
//
// The URL policy (Deps.URLPolicy) is checked three times: before approval
// (Precheck: a refused URL is never put to the operator and answers "URL
// blocked by Host policy: <reason>"), after approval (Invoke: the answer
// may come much later and DNS may have changed; "URL blocked by Host
// policy before request: <reason>"), and on every connection and redirect
// (the policy's transport and CheckRedirect; "URL blocked by Host policy:
// <reason>" with executionStarted true). Refusals are policy denials whose
// data carries the audit view only.
//
// The request is a GET with User-Agent demiurge/0.1, no ambient proxy, no
// cookies, bounded by timeout_seconds (default 20, at most 60). At most
// webExtractMaxBytes of the body are read, and reading stops as soon as
// max_chars (default and maximum 12,000) characters of text are in hand.
// HTML becomes its title, a blank line and its visible text; other types
// are decoded as text. A cut result ends in "\n...[truncated]" and has
// data.truncated true. A status outside 2xx is "web_extract failed: HTTP
// Error <code>: <text>"; a network error is "web_extract failed: <error>",
// never quoting the URL.
type webExtractor struct {
	policy urlpolicy.Policy
}

var (
	_ effect.Adapter    = webExtractor{}
	_ effect.Prechecker = webExtractor{}
	_ effect.Approvable = webExtractor{}
)

// Precheck refuses a missing or non-http(s) URL and one the URL policy
// refuses, before any approval is asked and before anything is fetched.
func (w webExtractor) Precheck(ctx context.Context, inv effect.Invocation) *effect.Outcome {
	raw, out, ok := webExtractURL(inv.Args)
	if !ok {
		return &out
	}
	if d := w.policy.Evaluate(ctx, raw); !d.Allowed {
		out := urlBlocked("URL blocked by Host policy: ", d, false)
		return &out
	}
	return nil
}

// ApprovalFacts describe the fetch to the operator by its audit target
// only (scheme, host, port); the rule key binds a session grant to the
// exact URL.
func (w webExtractor) ApprovalFacts(inv effect.Invocation) effect.ApprovalFacts {
	raw := strings.TrimSpace(stringArg(inv.Args, "url"))
	target := urlpolicy.AuditURL(raw)
	sum := sha256.Sum256([]byte(raw))
	return effect.ApprovalFacts{
		Action:   webExtractAction,
		Target:   target,
		Summary:  "Extract URL from " + target,
		RuleKey:  effect.RuleKey("web_extract:network.fetch:" + hex.EncodeToString(sum[:])),
		Baseline: policy.Prompt,
	}
}

// Invoke re-checks the URL, fetches it with the policy's client and
// returns its readable text.
func (w webExtractor) Invoke(ctx context.Context, inv effect.Invocation) (effect.Outcome, error) {
	raw, out, ok := webExtractURL(inv.Args)
	if !ok {
		return out, nil
	}
	d := w.policy.Evaluate(ctx, raw)
	if err := ctx.Err(); err != nil {
		return effect.Outcome{}, err
	}
	if !d.Allowed {
		return urlBlocked("URL blocked by Host policy before request: ", d, false), nil
	}
	timeout := time.Duration(positiveInt(inv.Args, "timeout_seconds", webExtractDefaultTimeout, webExtractMaxTimeout)) * time.Second
	maxChars := int(positiveInt(inv.Args, "max_chars", defaultToolOutputChars, defaultToolOutputChars))
	return w.fetch(ctx, raw, d, timeout, maxChars)
}

// fetch GETs raw and extracts its text. final tracks the decision on the
// URL the response came from (the last redirect target).
func (w webExtractor) fetch(ctx context.Context, raw string, first urlpolicy.Decision, timeout time.Duration, maxChars int) (effect.Outcome, error) {
	client := w.policy.Client(timeout)
	defer client.CloseIdleConnections()
	final := first
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		d, err := w.policy.EvaluateRedirect(req, via)
		if err == nil {
			final = d
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return invalid("web_extract failed: %v", err), nil
	}
	req.Header.Set("User-Agent", webExtractUserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")

	resp, err := client.Do(req)
	if err != nil {
		return fetchFailed(ctx, err, nil)
	}
	defer resp.Body.Close()
	data := map[string]any{
		"url":          final.Target(),
		"url_policy":   final.Audit(),
		"status":       resp.StatusCode,
		"content_type": nullable(resp.Header.Get("Content-Type")),
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fetchFailed(ctx, fmt.Errorf("HTTP Error %d: %s", resp.StatusCode, statusText(resp)), data)
	}
	page, err := readPage(resp.Body, resp.Header.Get("Content-Type"), maxChars, webExtractMaxBytes)
	if err != nil {
		return fetchFailed(ctx, err, data)
	}
	content := page.content()
	if content == "" {
		content = "(no readable text)"
	}
	if page.truncated {
		content += "\n...[truncated]"
	}
	data["truncated"] = page.truncated
	data["charset"] = page.charset
	if page.html {
		data["title"] = page.title
	}
	return succeeded(content, data), nil
}

// webExtractURL returns the trimmed url argument, or the outcome for a
// missing or non-http(s) one.
func webExtractURL(args map[string]any) (string, effect.Outcome, bool) {
	raw := strings.TrimSpace(stringArg(args, "url"))
	if raw == "" {
		return "", invalid("url is required"), false
	}
	lower := strings.ToLower(raw)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return "", invalid("only http and https URLs are supported"), false
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

// fetchFailed turns a failed request into its outcome: a policy refusal
// met on the way (a redirect, a connection) is a denial; other errors are
// "web_extract failed: <error>" without the URL, which may carry secrets.
// A cancelled call is the caller's error.
func fetchFailed(ctx context.Context, err error, data map[string]any) (effect.Outcome, error) {
	if ctx.Err() != nil {
		return effect.Outcome{}, ctx.Err()
	}
	var blocked *urlpolicy.BlockedError
	if errors.As(err, &blocked) {
		return urlBlocked("URL blocked by Host policy: ", blocked.Decision, true), nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	out := invalidData(data, "web_extract failed: %v", err)
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
