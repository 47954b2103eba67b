package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// testKey looks like a real key so that the key-shaped scrubber is exercised
// too; every test that sees an error checks it does not appear.
const testKey = "sk-test-SECRETKEY0123456789abcdef"

// sleepLog records the waits a client asked for, without waiting.
type sleepLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepLog) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// testOptions are fast options: no real sleeping, short timeouts.
func testOptions(log *sleepLog) Options {
	return Options{Sleep: log.sleep, Timeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
}

// recorder is an httptest handler that counts requests and keeps the last
// request's body and headers.
type recorder struct {
	mu     sync.Mutex
	n      int
	body   []byte
	header http.Header
	path   string
	query  string
	serve  func(n int, w http.ResponseWriter, r *http.Request) // n counts from 1
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.n++
	n := rec.n
	rec.body, rec.header, rec.path, rec.query = body, r.Header.Clone(), r.URL.Path, r.URL.RawQuery
	rec.mu.Unlock()
	rec.serve(n, w, r)
}

func (rec *recorder) calls() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.n
}

func (rec *recorder) lastBody(t *testing.T) map[string]any {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(rec.body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, rec.body)
	}
	return m
}

func serve(t *testing.T, fn func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{serve: fn}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return srv, rec
}

func newTestOpenAI(t *testing.T, base string, opts Options) *OpenAI {
	t.Helper()
	p, err := NewOpenAI(Endpoint{BaseURL: base, APIKey: demiurge.NewSecret(testKey), Options: opts})
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return p
}

func newTestAnthropic(t *testing.T, base string, opts Options) *Anthropic {
	t.Helper()
	p, err := NewAnthropic(Endpoint{BaseURL: base, APIKey: demiurge.NewSecret(testKey), Options: opts})
	if err != nil {
		t.Fatalf("NewAnthropic: %v", err)
	}
	return p
}

// writeJSON answers with status and a JSON body.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeSSE answers 200 with the given raw event-stream chunks, flushing each.
func writeSSE(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	for _, c := range chunks {
		_, _ = io.WriteString(w, c)
		f.Flush()
	}
}

// data formats one "data:" event.
func data(v string) string { return "data: " + v + "\n\n" }

// event formats one named event with data.
func event(name, v string) string { return fmt.Sprintf("event: %s\ndata: %s\n\n", name, v) }

// hangUp closes the client connection without an HTTP response.
func hangUp(t *testing.T, w http.ResponseWriter) {
	t.Helper()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// checkErr asserts err is a *demiurge.Error with code, whose message
// contains want and nowhere (nor in its causes) the test key.
func checkErr(t *testing.T, err error, code, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s %q", code, want)
	}
	t.Logf("error: %v", err)
	if got := demiurge.ErrorCode(err); got != code {
		t.Fatalf("code = %s, want %s (err %q)", got, code, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %q, want it to contain %q", err, want)
	}
	noKey(t, err)
}

// noKey asserts the key appears in no message of err's chain, in any
// formatting.
func noKey(t *testing.T, err error) {
	t.Helper()
	for e := err; e != nil; {
		for _, s := range []string{e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
			if strings.Contains(s, testKey) || strings.Contains(s, "SECRETKEY") {
				t.Fatalf("key leaked in error text: %q", s)
			}
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
}

// jsonEqual asserts got (decoded JSON) equals the JSON text want.
func jsonEqual(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", what, err)
	}
	// Normalise got through JSON as well.
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var g any
	_ = json.Unmarshal(b, &g)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s =\n%s\nwant\n%s", what, b, want)
	}
}

// collect returns a stream callback and a function returning what it got.
func collect() (func(string), func() []string) {
	var got []string
	return func(d string) { got = append(got, d) }, func() []string { return got }
}
