package urlpolicy_test

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/demiurge/demiurge/urlpolicy"
)

// TestCheck: the verdict taken before approval is literal only. It refuses
// what the URL says by itself (scheme, port, metadata and localhost names,
// literal addresses of every class) and lets a host name pass with no
// addresses, without asking the resolver anything.
func TestCheck(t *testing.T) {
	strict := urlpolicy.Policy{Resolver: noDNS{t.Errorf}}
	private := urlpolicy.Policy{AllowPrivate: true, Resolver: noDNS{t.Errorf}}
	tests := []struct {
		url      string
		policy   urlpolicy.Policy
		reason   string
		host     string
		port     int
		resolved string // the literal address judged; "" for a name
	}{
		// Names pass pending their addresses, whatever they would resolve to.
		{"https://example.com/path?q=1", strict, urlpolicy.ReasonAllowed, "example.com", 443, ""},
		{"http://internal.example:8080/", strict, urlpolicy.ReasonAllowed, "internal.example", 8080, ""},
		{"https://user:pw@Example.COM./a#f", strict, urlpolicy.ReasonAllowed, "example.com", 443, ""},
		{"http://bücher.example./", strict, urlpolicy.ReasonAllowed, "xn--bcher-kva.example", 80, ""},
		{"http://1.2.3.256/", strict, urlpolicy.ReasonAllowed, "1.2.3.256", 80, ""}, // not a legacy IPv4: a name
		{"http://_dmarc.example/", strict, urlpolicy.ReasonAllowed, "_dmarc.example", 80, ""},
		// Names refused by themselves.
		{"http://metadata.google.internal/computeMetadata/v1/", private, urlpolicy.ReasonMetadataHostname, "metadata.google.internal", 80, ""},
		{"http://METADATA.GOOG./", private, urlpolicy.ReasonMetadataHostname, "metadata.goog", 80, ""},
		{"http://localhost:8080/", strict, urlpolicy.ReasonPrivateHostname, "localhost", 8080, ""},
		{"http://api.LOCALHOST./", strict, urlpolicy.ReasonPrivateHostname, "api.localhost", 80, ""},
		{"http://localhost/", private, urlpolicy.ReasonAllowed, "localhost", 80, ""},
		// Literal addresses are classified here, in every notation.
		{"http://127.0.0.1:9/", strict, urlpolicy.ReasonPrivateAddress, "127.0.0.1", 9, "127.0.0.1"},
		{"http://user:pw@0x7f000001/?token=x", strict, urlpolicy.ReasonPrivateAddress, "0x7f000001", 80, "127.0.0.1"},
		{"http://[::ffff:10.0.0.1]/", strict, urlpolicy.ReasonPrivateAddress, "::ffff:10.0.0.1", 80, "10.0.0.1"},
		{"http://[::1]/", private, urlpolicy.ReasonAllowed, "::1", 80, "::1"},
		{"http://169.254.169.254/latest/", private, urlpolicy.ReasonMetadataAddress, "169.254.169.254", 80, "169.254.169.254"},
		{"http://[fd00:ec2::254]/", private, urlpolicy.ReasonMetadataAddress, "fd00:ec2::254", 80, "fd00:ec2::254"},
		{"http://0/", private, urlpolicy.ReasonNonRoutableAddress, "0", 80, "0.0.0.0"},
		{"http://192.0.2.1/", strict, urlpolicy.ReasonNonRoutableAddress, "192.0.2.1", 80, "192.0.2.1"},
		{"http://8.8.8.8/", strict, urlpolicy.ReasonAllowed, "8.8.8.8", 80, "8.8.8.8"},
		// What does not parse, and what is not fetched.
		{"ftp://example.com/", strict, urlpolicy.ReasonUnsupportedScheme, "example.com", 80, ""},
		{"http:///path", strict, urlpolicy.ReasonMissingHostname, "", 80, ""},
		{"http://example.com:99999/", strict, urlpolicy.ReasonInvalidURL, "", 0, ""},
		{"http://example.com:0/", strict, urlpolicy.ReasonInvalidURL, "", 0, ""},
		{"http://a..b/", strict, urlpolicy.ReasonInvalidURL, "", 0, ""},
	}
	for _, tt := range tests {
		d := tt.policy.Check(tt.url)
		if d.Reason != tt.reason || d.Allowed != (tt.reason == urlpolicy.ReasonAllowed) || d.Hostname != tt.host || d.Port != tt.port {
			t.Errorf("%q: %+v, want reason %s host %q port %d", tt.url, d, tt.reason, tt.host, tt.port)
			continue
		}
		switch {
		case tt.resolved == "" && len(d.Resolved) != 0:
			t.Errorf("%q: resolved %v before any connection", tt.url, d.Resolved)
		case tt.resolved != "" && (len(d.Resolved) != 1 || d.Resolved[0] != netip.MustParseAddr(tt.resolved)):
			t.Errorf("%q: resolved %v, want [%s]", tt.url, d.Resolved, tt.resolved)
		}
	}
}

// TestCheckAgreesWithEvaluate: a URL Check refuses is refused by Evaluate
// for the same reason, a literal URL gets the same decision from both, and
// a name Check lets pass is decided by its answers only.
func TestCheckAgreesWithEvaluate(t *testing.T) {
	p := urlpolicy.Policy{Resolver: newDNS(dnsTable)}
	for name := range dnsTable {
		for _, raw := range []string{"http://" + name + "/", "https://" + name + ":8443/x"} {
			c, e := p.Check(raw), p.Evaluate(context.Background(), raw)
			if !c.Allowed && (e.Allowed || e.Reason != c.Reason) {
				t.Errorf("%q: Check %s, Evaluate %s", raw, c.Reason, e.Reason)
			}
			if c.Allowed && len(c.Resolved) == 0 && e.Allowed && len(e.Resolved) == 0 {
				t.Errorf("%q: Evaluate allowed a name without addresses", raw)
			}
		}
	}
	for _, raw := range []string{"http://127.1/", "http://[::1]/", "http://8.8.8.8:81/", "http://169.254.1.1/", "http://[2606:4700:4700::1111]/"} {
		c, e := p.Check(raw), p.Evaluate(context.Background(), raw)
		if c.Reason != e.Reason || c.Target() != e.Target() || len(c.Resolved) != 1 || c.Resolved[0] != e.Resolved[0] {
			t.Errorf("%q: Check %+v, Evaluate %+v", raw, c, e)
		}
	}
}

// countingDNS counts lookups and answers every name with one address.
type countingDNS struct {
	addr  netip.Addr
	calls atomic.Int32
}

func (c *countingDNS) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	c.calls.Add(1)
	return []net.IPAddr{{IP: net.IP(c.addr.AsSlice())}}, nil
}

// FuzzCheck: Check never resolves, and never contradicts Evaluate: what
// it refuses, Evaluate refuses for the same reason.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"https://example.com/", "http://127.0.0.1/", "http://0x7f000001/", "http://[::1]:8080/x",
		"http://user:pw@10.0.0.1/?q#f", "http://localhost/", "http://x.localhost./", "http://bücher.example/",
		"http://metadata.google.internal/", "ftp://x/", "http://1.2.3.256/", "http://h:0/",
	} {
		f.Add(s)
	}
	dns := &countingDNS{addr: netip.MustParseAddr("93.184.216.34")}
	p := urlpolicy.Policy{Resolver: dns}
	f.Fuzz(func(t *testing.T, raw string) {
		before := dns.calls.Load()
		c := p.Check(raw)
		if dns.calls.Load() != before {
			t.Fatalf("%q: Check resolved", raw)
		}
		e := p.Evaluate(context.Background(), raw)
		if !c.Allowed && (e.Allowed || e.Reason != c.Reason) {
			t.Fatalf("%q: Check refused (%s), Evaluate %v (%s)", raw, c.Reason, e.Allowed, e.Reason)
		}
		if c.Target() != e.Target() {
			t.Fatalf("%q: targets %q and %q", raw, c.Target(), e.Target())
		}
	})
}
