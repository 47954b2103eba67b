package urlpolicy_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge/urlpolicy"
)

// counter is a loopback HTTP server that counts the requests reaching it.
type counter struct {
	*httptest.Server
	hits atomic.Int32
}

func newCounter(t *testing.T, h http.HandlerFunc) *counter {
	t.Helper()
	c := &counter{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func okHandler(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

func get(t *testing.T, c *http.Client, raw string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

func blockedReason(t *testing.T, err error) string {
	t.Helper()
	var b *urlpolicy.BlockedError
	if !errors.As(err, &b) {
		t.Fatalf("error %v (%T) is not a policy refusal", err, err)
	}
	return b.Decision.Reason
}

func TestClientRefusesLoopbackByDefault(t *testing.T) {
	srv := newCounter(t, okHandler)
	c := urlpolicy.Policy{}.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	_, err := get(t, c, srv.URL)
	if got := blockedReason(t, err); got != urlpolicy.ReasonPrivateAddress {
		t.Fatalf("reason %q, want private_address", got)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server saw %d requests", n)
	}
}

func TestClientReachesAdmittedLoopback(t *testing.T) {
	srv := newCounter(t, okHandler)
	for _, p := range []urlpolicy.Policy{{AllowPrivate: true}, {AllowPrivatePrefixes: loopback}} {
		c := p.Client(5 * time.Second)
		resp, err := get(t, c, srv.URL)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "ok" {
			t.Fatalf("body %q", body)
		}
		c.CloseIdleConnections()
	}
	if tr := (urlpolicy.Policy{}).Transport(); tr.Proxy != nil {
		t.Fatal("transport has a proxy function")
	}
}

// TestRebindingRefusedAtConnect: the name is public when it is first
// resolved and private when the connection is opened. The dialer resolves
// and judges the name again and refuses; the server is never reached.
func TestRebindingRefusedAtConnect(t *testing.T) {
	srv := newCounter(t, okHandler)
	dns := &sequenceDNS{host: "rebind.test", answers: []string{"93.184.216.34", "127.0.0.1"}}
	p := urlpolicy.Policy{Resolver: dns}
	u := "http://rebind.test:" + port(t, srv.URL) + "/"
	if d := p.Evaluate(context.Background(), u); !d.Allowed {
		t.Fatalf("first check: %+v, want allowed", d)
	}
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	_, err := get(t, c, u)
	if got := blockedReason(t, err); got != urlpolicy.ReasonPrivateAddress {
		t.Fatalf("reason %q, want private_address", got)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server saw %d requests after rebinding", n)
	}
	if dns.calls != 2 {
		t.Fatalf("%s, want 2 (the check and the connection)", dns)
	}
}

// TestRedirectToPrivateRefusedAtThatHop: a chain on an admitted loopback
// server ends in a redirect to a private name; the hop is refused before
// any connection to it, after the earlier hops were served.
func TestRedirectToPrivateRefusedAtThatHop(t *testing.T) {
	var target string
	srv := newCounter(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/hop", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, target, http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	})
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopback, Resolver: newDNS(map[string][]string{
		"internal.test": {"10.0.0.7"},
		"public.test":   {"127.0.0.1"}, // a public-looking name that lands on loopback, which is admitted
	})}
	tests := []struct {
		target, reason string
	}{
		{"http://internal.test:" + port(t, srv.URL) + "/secret", urlpolicy.ReasonPrivateAddress},
		{"http://169.254.169.254/latest/meta-data/", urlpolicy.ReasonMetadataAddress},
		{"http://0x0a000001/", urlpolicy.ReasonPrivateAddress},
		{"http://[::1]:" + port(t, srv.URL) + "/", urlpolicy.ReasonPrivateAddress},
		{"http://localhost:" + port(t, srv.URL) + "/", urlpolicy.ReasonPrivateHostname},
		{"ftp://example.com/", ""}, // Go's client refuses unsupported schemes itself
	}
	for _, tt := range tests {
		target = tt.target
		srv.hits.Store(0)
		c := p.Client(5 * time.Second)
		_, err := get(t, c, srv.URL+"/start")
		c.CloseIdleConnections()
		if err == nil {
			t.Fatalf("redirect to %s followed", tt.target)
		}
		if tt.reason != "" {
			if got := blockedReason(t, err); got != tt.reason {
				t.Fatalf("redirect to %s: reason %q, want %q", tt.target, got, tt.reason)
			}
		}
		if n := srv.hits.Load(); n != 2 {
			t.Fatalf("redirect to %s: %d requests served, want 2 (/start and /hop)", tt.target, n)
		}
	}

	// The same chain to an allowed target is followed to the end.
	target = "http://public.test:" + port(t, srv.URL) + "/end"
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	resp, err := get(t, c, srv.URL+"/start")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Request.URL.Path != "/end" {
		t.Fatalf("ended at %s", resp.Request.URL)
	}
}

func TestRedirectLimit(t *testing.T) {
	srv := newCounter(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	c := urlpolicy.Policy{AllowPrivatePrefixes: loopback}.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	_, err := get(t, c, srv.URL)
	if !errors.Is(err, urlpolicy.ErrTooManyRedirects) {
		t.Fatalf("err=%v, want ErrTooManyRedirects", err)
	}
	if got, want := srv.hits.Load(), int32(urlpolicy.MaxRedirects); got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
}

// tlsClient returns p's client trusting srv's certificate.
func tlsClient(p urlpolicy.Policy, srv *httptest.Server) *http.Client {
	c := p.Client(5 * time.Second)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	return c
}

// TestPinnedConnectionKeepsHostAndServerName: the connection goes to the
// judged address while the Host header and TLS server name (and the
// certificate check) stay the original host's.
func TestPinnedConnectionKeepsHostAndServerName(t *testing.T) {
	var host, sni atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host.Store(r.Host)
		sni.Store(r.TLS.ServerName)
		io.WriteString(w, "ok")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopback, Resolver: newDNS(map[string][]string{"example.com": {"127.0.0.1"}})}
	c := tlsClient(p, srv)
	defer c.CloseIdleConnections()
	u := "https://example.com:" + port(t, srv.URL) + "/"
	if _, err := get(t, c, u); err != nil {
		t.Fatal(err)
	}
	if got, want := host.Load(), "example.com:"+port(t, srv.URL); got != want {
		t.Fatalf("Host %q, want %q", got, want)
	}
	if got := sni.Load(); got != "example.com" {
		t.Fatalf("server name %q, want example.com", got)
	}

	// A name the certificate does not cover fails verification although
	// it resolves to the same server.
	p.Resolver = newDNS(map[string][]string{"other.test": {"127.0.0.1"}})
	c2 := tlsClient(p, srv)
	defer c2.CloseIdleConnections()
	if _, err := get(t, c2, "https://other.test:"+port(t, srv.URL)+"/"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err=%v, want a certificate error", err)
	}
}

func TestRedirectDowngradeRefused(t *testing.T) {
	plain := newCounter(t, okHandler)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/", http.StatusFound)
	}))
	defer srv.Close()
	c := tlsClient(urlpolicy.Policy{AllowPrivatePrefixes: loopback}, srv)
	defer c.CloseIdleConnections()
	_, err := get(t, c, srv.URL)
	if got := blockedReason(t, err); got != urlpolicy.ReasonRedirectDowngrade {
		t.Fatalf("reason %q, want redirect_downgrade", got)
	}
	if n := plain.hits.Load(); n != 0 {
		t.Fatalf("plain server saw %d requests", n)
	}
}

// TestAmbientProxyIgnored: with HTTP_PROXY set, requests still go
// straight to the judged address, never to the proxy.
func TestAmbientProxyIgnored(t *testing.T) {
	proxy := newCounter(t, okHandler)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	srv := newCounter(t, okHandler)
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopback, Resolver: newDNS(map[string][]string{"site.test": {"127.0.0.1"}})}
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	if _, err := get(t, c, "http://site.test:"+port(t, srv.URL)+"/"); err != nil {
		t.Fatal(err)
	}
	if srv.hits.Load() != 1 || proxy.hits.Load() != 0 {
		t.Fatalf("server %d, proxy %d requests; want 1 and 0", srv.hits.Load(), proxy.hits.Load())
	}
}

func port(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
