package provider

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// Causes of an attempt's context, told apart from the caller's cancellation.
var (
	errAttemptTimeout = errors.New("attempt timeout")
	errIdleTimeout    = errors.New("idle timeout")
)

// maxErrorBody bounds how much of an error response is read for its excerpt.
const maxErrorBody = 64 << 10

// client is the HTTP half shared by the openai and anthropic providers: one
// endpoint, its headers, retries and timeouts, and the translation of every
// failure into a *demiurge.Error whose message never holds the key.
type client struct {
	name   string // profile id, the prefix of every error message
	url    string
	key    demiurge.Secret
	header http.Header // sent on every request, credentials included
	opts   Options
}

// retryable marks an error found inside a 2xx response body that a retry may
// cure (an overloaded or rate-limit event), when no output has been emitted.
type retryable struct{ err *demiurge.Error }

func (r *retryable) Error() string { return r.err.Error() }

// streamDecoder assembles one wire protocol's streamed response.
type streamDecoder interface {
	read(r *sseReader, emit func(string)) error
	response() demiurge.ModelResponse
}

// complete posts body and decodes the answer: as one JSON document with
// decode when stream is nil, else as an event stream with a fresh decoder per
// attempt, passing text deltas to stream.
func (c *client) complete(ctx context.Context, body []byte, stream func(string),
	decode func(name string, r io.Reader) (demiurge.ModelResponse, error), newStream func() streamDecoder,
) (demiurge.ModelResponse, error) {
	var resp demiurge.ModelResponse
	err := c.post(ctx, body, stream != nil, func(r io.Reader, contentType string) error {
		if stream == nil || isJSON(contentType) {
			// A server that ignores "stream": true answers with one JSON
			// document; its text is passed on as one delta.
			var derr error
			resp, derr = decode(c.name, r)
			if derr == nil && stream != nil && resp.Content != "" {
				stream(resp.Content)
			}
			return derr
		}
		st := newStream()
		if serr := st.read(newSSEReader(r), stream); serr != nil {
			return serr
		}
		resp = st.response()
		return nil
	})
	if err != nil {
		return demiurge.ModelResponse{}, err
	}
	resp.Usage = usageOf(resp.Raw)
	return resp, nil
}

// post sends body and passes the body of a 2xx response to handle. It retries
// on 429, 408, 5xx and connection failures that happen before any byte of the
// response body was read, and never after: a handler that has read bytes (and
// perhaps streamed deltas) owns the outcome.
func (c *client) post(ctx context.Context, body []byte, stream bool, handle func(r io.Reader, contentType string) error) error {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return c.contextError(ctx, ctx)
		}
		err, retry, wait := c.attempt(ctx, body, stream, handle)
		if err == nil {
			return nil
		}
		if !retry || attempt >= c.opts.MaxRetries {
			return err
		}
		if wait < 0 {
			wait = c.backoff(attempt)
		}
		if c.opts.Sleep(ctx, wait) != nil {
			return c.contextError(ctx, ctx)
		}
	}
}

// attempt makes one request. wait is the server's Retry-After, or -1.
func (c *client) attempt(ctx context.Context, body []byte, stream bool, handle func(r io.Reader, contentType string) error) (err *demiurge.Error, retry bool, wait time.Duration) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	total := time.AfterFunc(c.opts.Timeout, func() { cancel(errAttemptTimeout) })
	defer total.Stop()
	var idle *time.Timer
	if stream {
		idle = time.AfterFunc(c.opts.IdleTimeout, func() { cancel(errIdleTimeout) })
		defer idle.Stop()
	}

	req, rerr := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if rerr != nil {
		return c.errorf(demiurge.ECONFIG, nil, "%s: invalid endpoint URL", c.name), false, -1
	}
	req.Header = c.header.Clone()
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, derr := c.opts.HTTPClient.Do(req)
	if derr != nil {
		if actx.Err() != nil {
			return c.contextError(ctx, actx), false, -1
		}
		return c.errorf(demiurge.EUNAVAILABLE, transportCause(derr), "%s: connection failed: %s", c.name, transportCause(derr)), retryableTransport(derr), -1
	}
	defer resp.Body.Close()
	if idle != nil {
		idle.Reset(c.opts.IdleTimeout)
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if actx.Err() != nil && len(raw) == 0 {
			return c.contextError(ctx, actx), false, -1
		}
		code, retry := statusCode(resp.StatusCode)
		if code == demiurge.EINVALID && contextLengthError(raw) {
			code = demiurge.ECONTEXTOVERFLOW
		}
		text := excerpt(errorMessage(raw), c.key.Reveal(), maxExcerpt)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			text = "unexpected redirect (redirects are not followed)"
		}
		text = cmp.Or(text, http.StatusText(resp.StatusCode))
		e := c.errorf(code, &StatusError{Status: resp.StatusCode}, "%s: HTTP %d", c.name, resp.StatusCode)
		if text != "" {
			e.Message += ": " + text
		}
		return e, retry, retryAfter(resp.Header, c.opts.Now(), c.opts.MaxRetryAfter)
	}

	cr := &countingReader{r: resp.Body}
	if idle != nil {
		cr.onData = func() { idle.Reset(c.opts.IdleTimeout) }
	}
	herr := handle(cr, resp.Header.Get("Content-Type"))
	if herr == nil {
		return nil, false, -1
	}
	if actx.Err() != nil {
		return c.contextError(ctx, actx), false, -1
	}
	if cr.n == 0 && cr.err != nil {
		if cr.err == io.EOF {
			return c.errorf(demiurge.EUNAVAILABLE, nil, "%s: connection closed before any response data", c.name), true, -1
		}
		return c.errorf(demiurge.EUNAVAILABLE, cr.err, "%s: connection failed: %s", c.name, cr.err), true, -1
	}
	if cr.err != nil && cr.err != io.EOF {
		return c.errorf(demiurge.EUNAVAILABLE, cr.err, "%s: response interrupted: %s", c.name, cr.err), false, -1
	}
	var r *retryable
	if errors.As(herr, &r) {
		return c.scrubbed(r.err), true, -1
	}
	var de *demiurge.Error
	if errors.As(herr, &de) {
		return c.scrubbed(de), false, -1
	}
	return c.errorf(demiurge.EINVALID, nil, "%s: malformed response: %s", c.name, herr), false, -1
}

// contextError explains why actx (the attempt's context, derived from the
// caller's ctx) ended.
func (c *client) contextError(ctx, actx context.Context) *demiurge.Error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return c.errorf(demiurge.ECANCELED, nil, "%s: request cancelled", c.name)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return c.errorf(demiurge.ETIMEOUT, nil, "%s: deadline exceeded", c.name)
	}
	switch context.Cause(actx) {
	case errIdleTimeout:
		return c.errorf(demiurge.ETIMEOUT, nil, "%s: no data from server for %s", c.name, c.opts.IdleTimeout)
	case errAttemptTimeout:
		return c.errorf(demiurge.ETIMEOUT, nil, "%s: request timed out after %s", c.name, c.opts.Timeout)
	}
	return c.errorf(demiurge.ECANCELED, nil, "%s: request cancelled", c.name)
}

func (c *client) errorf(code string, cause error, format string, args ...any) *demiurge.Error {
	return &demiurge.Error{Code: code, Message: scrub(fmt.Sprintf(format, args...), c.key.Reveal()), Err: cause}
}

func (c *client) scrubbed(e *demiurge.Error) *demiurge.Error {
	return &demiurge.Error{Code: e.Code, Message: excerpt(e.Message, c.key.Reveal(), maxMessage), Err: e.Err}
}

// backoff is the jittered exponential wait before retry number attempt+1:
// a uniform pick in [d/2, d] with d = InitialBackoff·2^attempt, capped.
func (c *client) backoff(attempt int) time.Duration {
	d := c.opts.InitialBackoff
	for i := 0; i < attempt && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.opts.MaxBackoff)
	half := d / 2
	return half + rand.N(half+1)
}

// statusCode maps an HTTP status to an error code and whether it is worth
// retrying.
func statusCode(status int) (code string, retry bool) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return demiurge.EUNAUTHORIZED, false
	case status == http.StatusTooManyRequests:
		return demiurge.EUNAVAILABLE, true
	case status == http.StatusRequestTimeout:
		return demiurge.ETIMEOUT, true
	case status >= 500:
		return demiurge.EUNAVAILABLE, true
	default:
		return demiurge.EINVALID, false
	}
}

// retryAfter reads Retry-After (seconds or an HTTP date) or OpenAI's
// retry-after-ms, capped at limit; -1 when absent or unreadable.
func retryAfter(h http.Header, now time.Time, limit time.Duration) time.Duration {
	seconds := func(v string, unit float64) (time.Duration, bool) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return 0, false
		}
		// Clamp before converting: a huge value must not overflow Duration.
		f = math.Max(0, math.Min(f*unit, limit.Seconds()))
		return time.Duration(f * float64(time.Second)), true
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if d, ok := seconds(v, 0.001); ok {
			return d
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if d, ok := seconds(v, 1); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, min(t.Sub(now), limit))
	}
	return -1
}

// transportCause strips the *url.Error wrapper, whose text repeats the URL.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryableTransport reports whether a failure to get a response may be
// cured by trying again: connection refused or reset, EOF. A certificate the
// client rejects will be rejected again.
func retryableTransport(err error) bool {
	var cve *tls.CertificateVerificationError
	return !errors.As(err, &cve)
}

// countingReader counts the bytes read and keeps the first read error, so
// that post can tell "nothing arrived" (retry) from "the body broke midway".
type countingReader struct {
	r      io.Reader
	n      int64
	err    error
	onData func()
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if n > 0 && c.onData != nil {
		c.onData()
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// isJSON reports whether a Content-Type is a JSON document (not an event
// stream).
func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
