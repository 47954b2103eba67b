package urlpolicy_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/testutil"
	"github.com/demiurge/demiurge/urlpolicy"
)

// TestNameResolvedOnlyAtConnect: checking the URL, building the client
// and the request look nothing up; the one lookup is the dialer's, when
// the connection is opened, and a private answer is refused there with
// the policy's message.
func TestNameResolvedOnlyAtConnect(t *testing.T) {
	srv := newCounter(t, okHandler)
	dns := newDNS(map[string][]string{"internal.test": {"10.0.0.7"}})
	p := urlpolicy.Policy{Resolver: dns}
	u := "http://internal.test:" + port(t, srv.URL) + "/?token=s3cret"
	if d := p.Check(u); !d.Allowed || len(d.Resolved) != 0 {
		t.Fatalf("Check: %+v, want allowed pending its addresses", d)
	}
	if _, err := p.EvaluateRedirect(mustRequest(t, u), []*http.Request{mustRequest(t, srv.URL)}); err != nil {
		t.Fatalf("redirect check: %v", err)
	}
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	if n := dns.count(); n != 0 {
		t.Fatalf("%d lookups before any connection", n)
	}
	_, err := get(t, c, u)
	var blocked *urlpolicy.BlockedError
	if !errors.As(err, &blocked) || blocked.Decision.Reason != urlpolicy.ReasonPrivateAddress {
		t.Fatalf("err %v, want a private_address refusal", err)
	}
	if got, want := blocked.Error(), "URL blocked by Host policy: private_address (internal.test:"+port(t, srv.URL)+")"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	dns.mu.Lock()
	lookups := slices.Clone(dns.lookups)
	dns.mu.Unlock()
	if !slices.Equal(lookups, []string{"internal.test"}) || srv.hits.Load() != 0 {
		t.Fatalf("lookups %v, server hits %d; want one lookup and no request", lookups, srv.hits.Load())
	}
}

// TestDialFailsClosed: a failed, empty or malformed resolution refuses
// the connection.
func TestDialFailsClosed(t *testing.T) {
	srv := newCounter(t, okHandler)
	p := urlpolicy.Policy{AllowPrivate: true, Resolver: newDNS(map[string][]string{"empty.test": {}, "garbage.test": {"127.0.0.1", "garbage"}})}
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	for host, want := range map[string]string{
		"missing.test": urlpolicy.ReasonDNSFailure,
		"empty.test":   urlpolicy.ReasonDNSNoAddresses,
		"garbage.test": urlpolicy.ReasonDNSInvalidAddress,
	} {
		_, err := get(t, c, "http://"+host+":"+port(t, srv.URL)+"/")
		if got := blockedReason(t, err); got != want {
			t.Errorf("%s: reason %q, want %q", host, got, want)
		}
	}
	if srv.hits.Load() != 0 {
		t.Fatalf("server saw %d requests", srv.hits.Load())
	}
}

// TestDialObserver: the observer of the request's context sees each dial
// decision with the addresses the dialer judged.
func TestDialObserver(t *testing.T) {
	srv := newCounter(t, okHandler)
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopback, Resolver: newDNS(map[string][]string{"site.test": {"127.0.0.1"}, "inner.test": {"10.1.1.1"}})}
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	var mu sync.Mutex
	var seen []urlpolicy.Decision
	ctx := urlpolicy.WithDialObserver(context.Background(), func(d urlpolicy.Decision) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, d)
	})
	for _, host := range []string{"site.test", "inner.test"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+":"+port(t, srv.URL)+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("observed %d dials, want 2: %+v", len(seen), seen)
	}
	if d := seen[0]; !d.Allowed || d.Hostname != "site.test" || !slices.Equal(d.Resolved, []netip.Addr{netip.MustParseAddr("127.0.0.1")}) {
		t.Fatalf("first dial %+v", d)
	}
	if d := seen[1]; d.Allowed || d.Reason != urlpolicy.ReasonPrivateAddress || d.Hostname != "inner.test" {
		t.Fatalf("second dial %+v", d)
	}
}

// TestServerResolver: the resolver asks the configured name server, and
// the connection goes to its answer.
func TestServerResolver(t *testing.T) {
	srv := newCounter(t, okHandler)
	dns := testutil.StartDNSServer(t, map[string]string{"named.test": "127.0.0.1"})
	r, err := urlpolicy.ServerResolver(dns.Addr)
	if err != nil {
		t.Fatal(err)
	}
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopback, Resolver: r}
	c := p.Client(5 * time.Second)
	defer c.CloseIdleConnections()
	if _, err := get(t, c, "http://named.test:"+port(t, srv.URL)+"/"); err != nil {
		t.Fatal(err)
	}
	if !dns.Asked("named.test") || srv.hits.Load() != 1 {
		t.Fatalf("queries %v, hits %d", dns.Queries(), srv.hits.Load())
	}
	_, err = get(t, c, "http://unknown-name.test:"+port(t, srv.URL)+"/")
	if got := blockedReason(t, err); got != urlpolicy.ReasonDNSFailure || !dns.Asked("unknown-name.test") {
		t.Fatalf("unknown name: reason %q, queries %v", got, dns.Queries())
	}

	for _, bad := range []string{"", "127.0.0.1", "localhost:53", "127.0.0.1:0", "[::1]:x", "dns.example:53"} {
		if _, err := urlpolicy.ServerResolver(bad); err == nil {
			t.Errorf("ServerResolver(%q) accepted", bad)
		}
	}
	if _, err := urlpolicy.ServerResolver("[::1]:5353"); err != nil {
		t.Errorf("IPv6 server: %v", err)
	}
}

func mustRequest(t *testing.T, raw string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
