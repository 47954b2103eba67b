package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

var hello = demiurge.ModelRequest{Model: "m", Messages: []demiurge.ModelMessage{{Role: "user", Content: "hi"}}}

const okBody = `{"choices":[{"message":{"content":"ok"}}]}`

func TestRetryAfter429(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": now.Add(12 * time.Second).Format(http.TimeFormat)}, 12 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"capped", map[string]string{"Retry-After": "86400"}, 30 * time.Second},
		{"capped date", map[string]string{"Retry-After": now.Add(time.Hour).Format(http.TimeFormat)}, 30 * time.Second},
		{"milliseconds header wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 1 {
					for k, v := range tt.header {
						w.Header().Set(k, v)
					}
					writeJSON(w, 429, `{"error":{"message":"slow down"}}`)
					return
				}
				writeJSON(w, 200, okBody)
			})
			log := &sleepLog{}
			opts := testOptions(log)
			opts.MaxRetryAfter = 30 * time.Second
			opts.Now = func() time.Time { return now }
			resp, err := newTestOpenAI(t, srv.URL, opts).Complete(context.Background(), hello, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "ok" || rec.calls() != 2 {
				t.Fatalf("content %q after %d calls, want ok after 2", resp.Content, rec.calls())
			}
			if got := log.waits(); !reflect.DeepEqual(got, []time.Duration{tt.want}) {
				t.Errorf("waits = %v, want [%v]", got, tt.want)
			}
		})
	}
}

func TestRetry500ThenFail(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 500, "{\"error\":{\"message\":\"boom\\n  twice\"}}")
	})
	log := &sleepLog{}
	opts := testOptions(log)
	opts.InitialBackoff, opts.MaxBackoff = 100*time.Millisecond, 300*time.Millisecond
	_, err := newTestOpenAI(t, srv.URL, opts).Complete(context.Background(), hello, nil)
	checkErr(t, err, demiurge.EUNAVAILABLE, "")
	if got, want := err.Error(), "openai: HTTP 500: boom twice"; got != want {
		t.Errorf("err = %q, want %q", got, want)
	}
	if got := rec.calls(); got != 1+DefaultMaxRetries {
		t.Errorf("calls = %d, want %d", got, 1+DefaultMaxRetries)
	}
	waits := log.waits()
	bounds := [][2]time.Duration{{50 * time.Millisecond, 100 * time.Millisecond}, {100 * time.Millisecond, 200 * time.Millisecond}, {150 * time.Millisecond, 300 * time.Millisecond}}
	if len(waits) != len(bounds) {
		t.Fatalf("waits = %v, want %d", waits, len(bounds))
	}
	for i, w := range waits {
		if w < bounds[i][0] || w > bounds[i][1] {
			t.Errorf("wait %d = %v, want within %v", i, w, bounds[i])
		}
	}
}

func TestStatusCodes(t *testing.T) {
	tests := []struct {
		status     int
		body       string
		code, want string
		calls      int
	}{
		{401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`, demiurge.EUNAUTHORIZED, "openai: HTTP 401: Incorrect API key provided: <redacted:API_KEY>", 1},
		{403, ``, demiurge.EUNAUTHORIZED, "openai: HTTP 403: Forbidden", 1},
		{400, `{"error":{"type":"invalid_request_error","message":"bad model"}}`, demiurge.EINVALID, "openai: HTTP 400: bad model", 1},
		{404, `not here`, demiurge.EINVALID, "openai: HTTP 404: not here", 1},
		{408, ``, demiurge.ETIMEOUT, "openai: HTTP 408", 4},
		{503, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, demiurge.EUNAVAILABLE, "openai: HTTP 503: Overloaded", 4},
		{307, ``, demiurge.EINVALID, "openai: HTTP 307: unexpected redirect", 1},
		{422, "\x00\x01", demiurge.EINVALID, "openai: HTTP 422: Unprocessable Entity", 1},
		{418, `{"error":"short and stout"}`, demiurge.EINVALID, "openai: HTTP 418: short and stout", 1},
		{599, ``, demiurge.EUNAVAILABLE, "openai: HTTP 599", 4},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tt.status == 307 {
					w.Header().Set("Location", "http://elsewhere.test/steal")
				}
				writeJSON(w, tt.status, tt.body)
			})
			_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), hello, nil)
			checkErr(t, err, tt.code, tt.want)
			if rec.calls() != tt.calls {
				t.Errorf("calls = %d, want %d", rec.calls(), tt.calls)
			}
		})
	}
}

func TestNoRetriesWhenDisabled(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 502, "") })
	opts := testOptions(&sleepLog{})
	opts.MaxRetries = -1
	_, err := newTestOpenAI(t, srv.URL, opts).Complete(context.Background(), hello, nil)
	checkErr(t, err, demiurge.EUNAVAILABLE, "openai: HTTP 502: Bad Gateway")
	if rec.calls() != 1 {
		t.Errorf("calls = %d, want 1", rec.calls())
	}
}

func TestLongErrorBodyIsShortAndScrubbed(t *testing.T) {
	// The key sits across the 200-character cut: scrubbing must happen first.
	body := strings.Repeat("x", 190) + " " + testKey + " " + strings.Repeat("y", 500)
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 400, body) })
	_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), hello, nil)
	checkErr(t, err, demiurge.EINVALID, "openai: HTTP 400: xxx")
	excerpt := strings.TrimPrefix(err.Error(), "openai: HTTP 400: ")
	if n := len([]rune(excerpt)); n > maxExcerpt {
		t.Errorf("excerpt has %d characters, want ≤ %d", n, maxExcerpt)
	}
	if strings.Contains(excerpt, "sk-test") {
		t.Errorf("a key prefix survived the cut: %q", excerpt)
	}
}

func TestConnectionResetBeforeResponseIsRetried(t *testing.T) {
	srv, rec := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			hangUp(t, w)
			return
		}
		writeJSON(w, 200, okBody)
	})
	log := &sleepLog{}
	resp, err := newTestOpenAI(t, srv.URL, testOptions(log)).Complete(context.Background(), hello, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "ok" || rec.calls() != 2 || len(log.waits()) != 1 {
		t.Errorf("content %q, calls %d, waits %v: want ok after one retry", resp.Content, rec.calls(), log.waits())
	}
}

func TestEmptyBodyIsRetried(t *testing.T) {
	srv, rec := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			writeJSON(w, 200, "")
			return
		}
		writeJSON(w, 200, okBody)
	})
	resp, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), hello, nil)
	if err != nil || resp.Content != "ok" || rec.calls() != 2 {
		t.Fatalf("resp %q err %v calls %d: want ok after one retry", resp.Content, err, rec.calls())
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	log := &sleepLog{}
	// The key in the URL must not reach the message either.
	p := newTestOpenAI(t, "http://"+addr+"/v1?key="+testKey, testOptions(log))
	_, err = p.Complete(context.Background(), hello, nil)
	checkErr(t, err, demiurge.EUNAVAILABLE, "openai: connection failed:")
	if len(log.waits()) != DefaultMaxRetries {
		t.Errorf("waits = %v, want %d retries", log.waits(), DefaultMaxRetries)
	}
}

func TestStreamBrokenAfterOutputIsNotRetried(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, data(`{"choices":[{"index":0,"delta":{"content":"partial"}}]}`))
		hangUp(t, w)
	})
	cb, got := collect()
	_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(context.Background(), hello, cb)
	if code := demiurge.ErrorCode(err); code != demiurge.EUNAVAILABLE {
		t.Fatalf("code = %s (%v), want %s", code, err, demiurge.EUNAVAILABLE)
	}
	noKey(t, err)
	if rec.calls() != 1 {
		t.Errorf("calls = %d, want 1", rec.calls())
	}
	if !reflect.DeepEqual(got(), []string{"partial"}) {
		t.Errorf("deltas = %q, want the partial output once", got())
	}
}

func TestSlowFirstByteTimesOut(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	tests := []struct {
		name   string
		opts   func(*Options)
		stream bool
		want   string
	}{
		{"stream idle", func(o *Options) { o.IdleTimeout = 150 * time.Millisecond }, true, "openai: no data from server for 150ms"},
		{"request total", func(o *Options) { o.Timeout = 150 * time.Millisecond }, false, "openai: request timed out after 150ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rec.calls()
			opts := testOptions(&sleepLog{})
			tt.opts(&opts)
			var cb func(string)
			if tt.stream {
				cb, _ = collect()
			}
			start := time.Now()
			_, err := newTestOpenAI(t, srv.URL, opts).Complete(context.Background(), hello, cb)
			checkErr(t, err, demiurge.ETIMEOUT, tt.want)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			if got := rec.calls() - before; got != 1 {
				t.Errorf("calls = %d, want 1 (a timeout is not retried)", got)
			}
		})
	}
}

func TestStreamIdleBetweenEvents(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		writeSSE(w, data(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`))
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	opts := testOptions(&sleepLog{})
	opts.IdleTimeout = 150 * time.Millisecond
	cb, got := collect()
	_, err := newTestOpenAI(t, srv.URL, opts).Complete(context.Background(), hello, cb)
	checkErr(t, err, demiurge.ETIMEOUT, "openai: no data from server")
	if !reflect.DeepEqual(got(), []string{"a"}) {
		t.Errorf("deltas = %q", got())
	}
}

func TestCancelWhileServerNeverAnswers(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	for _, stream := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		var cb func(string)
		if stream {
			cb, _ = collect()
		}
		start := time.Now()
		_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(ctx, hello, cb)
		checkErr(t, err, demiurge.ECANCELED, "openai: request cancelled")
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("stream=%v: cancel took %v", stream, d)
		}
		cancel()
	}
}

func TestCallerDeadline(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	srv, _ := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{})).Complete(ctx, hello, nil)
	checkErr(t, err, demiurge.ETIMEOUT, "openai: deadline exceeded")
}

func TestCancelDuringBackoff(t *testing.T) {
	srv, rec := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 503, "") })
	ctx, cancel := context.WithCancel(context.Background())
	opts := testOptions(nil)
	opts.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	_, err := newTestOpenAI(t, srv.URL, opts).Complete(ctx, hello, nil)
	checkErr(t, err, demiurge.ECANCELED, "openai: request cancelled")
	if rec.calls() != 1 {
		t.Errorf("calls = %d, want 1", rec.calls())
	}
}

func TestCallerClientIsNotChanged(t *testing.T) {
	hc := &http.Client{}
	_ = newTestOpenAI(t, "http://127.0.0.1:1", Options{HTTPClient: hc})
	if hc.CheckRedirect != nil {
		t.Error("the caller's http.Client was modified")
	}
}

func TestScrub(t *testing.T) {
	tests := []struct{ in, want string }{
		{"key " + testKey + " end", "key <redacted:API_KEY> end"},
		{"url key=sk-test-SECRETKEY0123456789abcdef&x", "url key=<redacted:API_KEY>&x"},
		{"other sk-ant-api03-abcdefghijklmnopqrstuvwxyz here", "other <redacted> here"},
		{"masked sk-proj-****abcd stays", "masked sk-proj-****abcd stays"},
	}
	for _, tt := range tests {
		if got := scrub(tt.in, testKey); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	keyWithSpace := "a b/c+d"
	if got := scrub("q=a+b%2Fc%2Bd", keyWithSpace); got != "q="+redactedKey {
		t.Errorf("query-escaped key not scrubbed: %q", got)
	}
}

func TestExcerpt(t *testing.T) {
	if got, want := excerpt("  a\n\tb\x00\x1b[31m  c  ", "", 200), "a b [31m c"; got != want {
		t.Errorf("excerpt = %q, want %q", got, want)
	}
	if got := excerpt(strings.Repeat("é", 300), "", 200); len([]rune(got)) != 200 || !strings.HasSuffix(got, "…") {
		t.Errorf("excerpt of 300 runes = %d runes", len([]rune(got)))
	}
}

func TestConcurrentCompletes(t *testing.T) {
	// The first DefaultMaxRetries requests, whichever goroutines send them,
	// get a 503: concurrent calls retry while others succeed, and no call
	// can see more failures than it may retry.
	srv, rec := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n <= DefaultMaxRetries {
			writeJSON(w, 503, "")
			return
		}
		writeSSE(w, data(`{"choices":[{"index":0,"delta":{"content":"a b"},"finish_reason":"stop"}]}`), data("[DONE]"))
	})
	p := newTestOpenAI(t, srv.URL, testOptions(&sleepLog{}))
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			cb, got := collect()
			resp, err := p.Complete(context.Background(), hello, cb)
			if err == nil && (resp.Content != "a b" || len(got()) != 1) {
				err = errors.New("wrong response " + resp.Content)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if rec.calls() != 16+DefaultMaxRetries {
		t.Errorf("calls = %d, want the 16 answered and the refused ones", rec.calls())
	}
}
