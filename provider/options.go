package provider

import (
	"context"
	"net/http"
	"time"
)

// Defaults of Options.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxRetries     = 3
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 8 * time.Second
	DefaultMaxRetryAfter  = 60 * time.Second
)

// Options tune the HTTP providers. The zero value means "all defaults".
type Options struct {
	// HTTPClient sends the requests; nil means one over http.DefaultTransport
	// (its connection pool is shared by every provider of the process). Its
	// Timeout should be zero (Timeout below bounds each attempt instead, so a
	// long stream is not cut). Redirects are never followed: a provider
	// endpoint that redirects is a configuration error, and following it
	// would hand the API key header to another host.
	HTTPClient *http.Client

	// Timeout bounds one attempt from sending the request to the last byte
	// of the response (default 120 s). The caller's ctx bounds the whole call.
	Timeout time.Duration

	// IdleTimeout bounds, for streaming requests, the wait for the response
	// and then the gap between two reads of the stream (default 60 s), so a
	// server that accepts the connection and never answers fails with
	// ETIMEOUT long before Timeout.
	IdleTimeout time.Duration

	// MaxRetries is the number of retries after the first attempt (default
	// 3); a negative value disables retries.
	MaxRetries int

	// InitialBackoff and MaxBackoff shape the jittered exponential backoff
	// used when the server gives no Retry-After (defaults 500 ms and 8 s).
	InitialBackoff time.Duration
	MaxBackoff     time.Duration

	// MaxRetryAfter caps a server's Retry-After (default 60 s).
	MaxRetryAfter time.Duration

	// MaxTokens is the max_tokens sent when the request metadata names none.
	// Zero means: omitted for openai-chat, 4096 for anthropic-messages.
	MaxTokens int

	// Sleep waits d or until ctx is done (then it returns ctx.Err()). Tests
	// replace it so that backoff costs no real time. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error

	// Now is the clock used to read a Retry-After HTTP date. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	// A shallow copy, so that disabling redirects never changes the caller's client.
	hc := *o.HTTPClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.HTTPClient = &hc
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = DefaultInitialBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
